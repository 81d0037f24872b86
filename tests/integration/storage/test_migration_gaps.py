"""A migration number reserved by another change may be missing (issue 14: 0009 lands before
0008): the files still apply in order, once each, and the late file is applied when it appears
(storage.md §1 forward-only)."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from openwork_core.storage.errors import MigrationLayoutError
from openwork_core.storage.migrate import apply_migrations, discover_migrations
from tests.support.postgres import PgCluster


def _write(folder: Path, name: str, sql: str) -> None:
    (folder / name).write_text(sql, encoding="utf-8")


def test_a_gap_is_allowed_but_a_duplicate_number_is_a_layout_error(tmp_path: Path) -> None:
    _write(tmp_path, "0001_a.sql", "SELECT 1;")
    _write(tmp_path, "0003_c.sql", "SELECT 3;")
    assert [m.version for m in discover_migrations(tmp_path)] == [1, 3]
    _write(tmp_path, "0003_d.sql", "SELECT 4;")
    with pytest.raises(MigrationLayoutError):
        discover_migrations(tmp_path)


def test_the_repository_has_0009_without_needing_0008() -> None:
    names = [m.name for m in discover_migrations()]
    assert "0009_provider_settings.sql" in names


async def test_a_late_file_below_an_applied_one_is_applied_when_it_appears(
    pg_cluster: PgCluster, tmp_path: Path
) -> None:
    url = await pg_cluster.new_database(migrated=False)
    conn = await asyncpg.connect(url)
    try:
        _write(tmp_path, "0001_a.sql", "CREATE TABLE gap_a (id int);")
        _write(tmp_path, "0003_c.sql", "CREATE TABLE gap_c (id int);")
        assert await apply_migrations(conn, discover_migrations(tmp_path)) == [
            "0001_a.sql",
            "0003_c.sql",
        ]
        _write(tmp_path, "0002_b.sql", "CREATE TABLE gap_b (id int);")
        assert await apply_migrations(conn, discover_migrations(tmp_path)) == ["0002_b.sql"]
        assert await apply_migrations(conn, discover_migrations(tmp_path)) == []
        tables = await conn.fetch("SELECT tablename FROM pg_tables WHERE tablename LIKE 'gap_%'")
        assert sorted(r["tablename"] for r in tables) == ["gap_a", "gap_b", "gap_c"]
    finally:
        await conn.close()
