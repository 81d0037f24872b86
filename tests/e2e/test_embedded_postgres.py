"""`openwork serve` without OPENWORK_DATABASE_URL runs on an embedded PostgreSQL (pgserver) whose
data lives under OPENWORK_HOME and survives a restart (daemon-api.md §1; issue 2 item 1)."""

from __future__ import annotations

from pathlib import Path

from tests.support.daemon import start_daemon


async def test_the_daemon_keeps_its_data_in_an_embedded_postgres_under_openwork_home(
    tmp_path: Path, embedded_home: Path
) -> None:
    home = embedded_home
    workspace = tmp_path / "ws"
    workspace.mkdir()
    daemon = await start_daemon(home=home, database_url=None)
    try:
        async with daemon.client() as client:
            assert (await client.get("/v1/health")).json()["database"] == "ok"
            created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
            assert created.status_code == 201
            session_id = created.json()["session_id"]
    finally:
        assert await daemon.stop() == 0
    assert (home / "pgdata").is_dir()
    daemon = await start_daemon(home=home, database_url=None)
    try:
        async with daemon.client() as client:
            listed = (await client.get("/v1/sessions")).json()["sessions"]
            assert [s["session_id"] for s in listed] == [session_id]
    finally:
        assert await daemon.stop() == 0
