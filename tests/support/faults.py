"""Real fault injection in PostgreSQL: triggers that make chosen writes fail."""

from __future__ import annotations

from openwork_core.storage.postgres.store import PostgresStore

_FUNCTION = """
CREATE OR REPLACE FUNCTION openwork_test_injected_failure() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'injected failure on % (%)', TG_TABLE_NAME, TG_OP;
END $$ LANGUAGE plpgsql
"""


async def fail_writes(
    store: PostgresStore, table: str, *, when: str | None = None, operations: str = "INSERT"
) -> None:
    """Every matching write to ``table`` raises from now on (``when`` is a trigger condition)."""
    condition = f"WHEN ({when})" if when else ""
    name = f"openwork_test_fail_{table}_{abs(hash((when, operations))) % 10_000}"
    async with store.pool.acquire() as conn:
        await conn.execute(_FUNCTION)
        await conn.execute(
            f"CREATE TRIGGER {name} BEFORE {operations} ON {table} FOR EACH ROW {condition} "
            "EXECUTE FUNCTION openwork_test_injected_failure()"
        )


class Outage:
    """A real database outage for one test database: connections refused
    (``ALLOW_CONNECTIONS false``) and every open one terminated; ``end`` lets them back."""

    def __init__(self, admin_url: str, database_url: str) -> None:
        from urllib.parse import urlsplit

        self._admin_url = admin_url
        self._database = urlsplit(database_url).path.lstrip("/")

    async def begin(self) -> None:
        import asyncpg

        conn = await asyncpg.connect(self._admin_url)
        try:
            await conn.execute(f'ALTER DATABASE "{self._database}" ALLOW_CONNECTIONS false')
            await conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = $1 AND pid <> pg_backend_pid()",
                self._database,
            )
        finally:
            await conn.close()

    async def end(self) -> None:
        import asyncpg

        conn = await asyncpg.connect(self._admin_url)
        try:
            await conn.execute(f'ALTER DATABASE "{self._database}" ALLOW_CONNECTIONS true')
        finally:
            await conn.close()
