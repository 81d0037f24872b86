"""The ``mcp_servers`` table (migration 0012): each server of ``PUT /v1/mcp/servers/{name}`` as
its configuration without secrets (``openwork_core/mcp/store.py``)."""

from __future__ import annotations

import asyncpg
import orjson

from openwork_core.mcp.config import McpServerConfig


class PostgresMcpServers:
    """``McpServerStore`` on PostgreSQL; each method is one statement."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def list_mcp_servers(self) -> dict[str, McpServerConfig]:
        async with self._pool.acquire() as conn:
            rows = await conn.fetch("SELECT name, config::text AS config FROM mcp_servers")
        return {r["name"]: McpServerConfig.model_validate_json(r["config"]) for r in rows}

    async def put_mcp_server(self, name: str, config: McpServerConfig) -> None:
        stored = config.without_secrets().model_dump(mode="json", exclude_defaults=True)
        async with self._pool.acquire() as conn:
            await conn.execute(
                """INSERT INTO mcp_servers (name, config) VALUES ($1, $2::jsonb)
                   ON CONFLICT (name) DO UPDATE SET config = EXCLUDED.config, updated_at = now()""",
                name,
                orjson.dumps(stored).decode(),
            )

    async def delete_mcp_server(self, name: str) -> bool:
        async with self._pool.acquire() as conn:
            status = await conn.execute("DELETE FROM mcp_servers WHERE name = $1", name)
        return bool(status.endswith(" 1"))
