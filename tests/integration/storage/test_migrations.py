"""Migration runner on real PostgreSQL (storage.md §1: forward-only, never edit an applied file)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import asyncpg
import pytest

from openwork_core.storage.errors import MigrationChecksumMismatch
from openwork_core.storage.migrate import apply_migrations, discover_migrations
from tests.support.postgres import PgCluster


async def test_migrations_apply_in_order_and_record_a_checksum_per_file(
    pg_cluster: PgCluster,
) -> None:
    url = await pg_cluster.new_database(migrated=False)
    conn = await asyncpg.connect(url)
    try:
        applied = await apply_migrations(conn)
        migrations = discover_migrations()
        assert applied == [m.name for m in migrations]
        rows = await conn.fetch("SELECT version, name, checksum FROM schema_migrations ORDER BY 1")
        assert [(r["version"], r["name"], r["checksum"]) for r in rows] == [
            (m.version, m.name, m.checksum) for m in migrations
        ]
        assert await apply_migrations(conn) == [], "a second run applies nothing"
    finally:
        await conn.close()


async def test_concurrent_starts_apply_each_migration_once_under_the_advisory_lock(
    pg_cluster: PgCluster,
) -> None:
    url = await pg_cluster.new_database(migrated=False)
    conns = [await asyncpg.connect(url) for _ in range(3)]
    try:
        results = await asyncio.gather(*(apply_migrations(c) for c in conns))
        assert sorted(len(r) for r in results) == [0, 0, len(discover_migrations())]
    finally:
        for c in conns:
            await c.close()


async def test_a_changed_applied_migration_refuses_the_start(pg_cluster: PgCluster) -> None:
    url = await pg_cluster.new_database(migrated=False)
    conn = await asyncpg.connect(url)
    try:
        await apply_migrations(conn)
        first, *rest = discover_migrations()
        edited = (replace(first, sql=first.sql + "\n-- edited\n"), *rest)
        with pytest.raises(MigrationChecksumMismatch) as excinfo:
            await apply_migrations(conn, edited)
        assert first.name in str(excinfo.value)
        assert excinfo.value.code == "migration_checksum_mismatch"
    finally:
        await conn.close()
