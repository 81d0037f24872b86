"""The ``providers`` table: kind, endpoint, the NAME of the key's environment variable, models,
settings (migration 0009). API keys themselves are never stored."""

from __future__ import annotations

import asyncpg
import orjson
from pydantic import TypeAdapter

from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.postgres.steady_statements import steady
from openwork_core.storage.records import (
    ProviderKind,
    ProviderModel,
    ProviderRecord,
    ProviderSettings,
)

_MODELS: TypeAdapter[list[ProviderModel]] = TypeAdapter(list[ProviderModel])
_SETTINGS: TypeAdapter[ProviderSettings] = TypeAdapter(ProviderSettings)
_COLUMNS = "id, kind, base_url, api_key_env, models::text AS models, settings::text AS settings"
PROVIDER_BY_ID = steady(f"SELECT {_COLUMNS} FROM providers WHERE id = $1")
PROVIDERS = steady(f"SELECT {_COLUMNS} FROM providers ORDER BY id")


def _row(row: asyncpg.Record) -> ProviderRecord:
    return ProviderRecord(
        id=row["id"],
        kind=ProviderKind(row["kind"]),
        base_url=row["base_url"],
        api_key_env=row["api_key_env"],
        models=tuple(_MODELS.validate_json(row["models"])),
        settings=_SETTINGS.validate_json(row["settings"]),
    )


async def upsert_provider(conn: Conn, provider: ProviderRecord) -> ProviderRecord:
    row = await conn.fetchrow(
        f"""INSERT INTO providers (id, kind, base_url, api_key_env, models, settings)
           VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb)
           ON CONFLICT (id) DO UPDATE SET kind = EXCLUDED.kind, base_url = EXCLUDED.base_url,
               api_key_env = EXCLUDED.api_key_env, models = EXCLUDED.models,
               settings = EXCLUDED.settings, updated_at = now()
           RETURNING {_COLUMNS}""",
        provider.id,
        provider.kind.value,
        provider.base_url,
        provider.api_key_env,
        orjson.dumps(list(provider.models)).decode(),
        orjson.dumps(provider.settings).decode(),
    )
    assert row is not None
    return _row(row)


async def fetch_provider(conn: Conn, provider_id: str) -> ProviderRecord:
    row = await conn.fetchrow(PROVIDER_BY_ID, provider_id)
    if row is None:
        raise RecordNotFound(f"unknown provider: {provider_id}")
    return _row(row)


async def list_providers(conn: Conn) -> list[ProviderRecord]:
    rows = await conn.fetch(PROVIDERS)
    return [_row(r) for r in rows]
