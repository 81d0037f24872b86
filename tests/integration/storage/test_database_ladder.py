"""The test database ladder (DESIGN.md §5): each rung works, and when none does the run fails
loudly with what was tried — never a silent skip."""

from __future__ import annotations

import asyncpg
import pytest

from tests.support import postgres


async def test_the_embedded_pgserver_rung_gives_a_working_server() -> None:
    tried: list[str] = []
    cluster = postgres._try_pgserver(tried)
    assert cluster is not None, tried
    try:
        conn = await asyncpg.connect(cluster.admin_url)
        try:
            assert await conn.fetchval("SELECT 1") == 1
        finally:
            await conn.close()
    finally:
        for cleanup in cluster.cleanups:
            cleanup()


async def test_without_any_postgres_the_ladder_fails_and_lists_every_rung_it_tried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dead = "postgresql://postgres@127.0.0.1:1/test"
    monkeypatch.setenv("TEST_DATABASE_URL", dead)
    monkeypatch.setattr(postgres, "LOCAL_URL", dead)

    def no_docker(tried: list[str]) -> None:
        tried.append("testcontainers: no Docker engine answers (forced by the test)")

    def no_pgserver(tried: list[str]) -> None:
        tried.append("pgserver (embedded): unavailable (forced by the test)")

    monkeypatch.setattr(postgres, "_try_testcontainers", no_docker)
    monkeypatch.setattr(postgres, "_try_pgserver", no_pgserver)
    with pytest.raises(postgres.NoPostgres) as excinfo:
        await postgres.find_cluster()
    message = str(excinfo.value)
    for rung in ("TEST_DATABASE_URL=", dead, "testcontainers", "pgserver"):
        assert rung in message
