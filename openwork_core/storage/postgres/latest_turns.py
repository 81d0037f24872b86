"""The latest Turn of each of some sessions (``list_agents``, multi-agent.md §5)."""

from __future__ import annotations

from collections.abc import Collection

import asyncpg

from openwork_core.storage.postgres.turns import _COLUMNS, _row
from openwork_core.storage.records import TurnRecord


async def fetch_latest_turns(
    pool: asyncpg.Pool, session_ids: Collection[str]
) -> dict[str, TurnRecord]:
    """Session id → its Turn with the highest sequence; sessions without a Turn are absent."""
    if not session_ids:
        return {}
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            f"""SELECT DISTINCT ON (session_id) {_COLUMNS} FROM turns
                WHERE session_id = ANY($1::text[])
                ORDER BY session_id, sequence DESC""",
            list(session_ids),
        )
    return {row["session_id"]: _row(row) for row in rows}
