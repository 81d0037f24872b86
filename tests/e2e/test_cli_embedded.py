"""`openwork migrate` and `openwork doctor` next to a daemon on the embedded database (issue 15
point 2): they must not start a second server on its data — that would stop the daemon's."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run_cli
from tests.support.daemon import start_daemon


async def test_migrate_and_doctor_leave_a_running_daemons_embedded_database_alone(
    tmp_path: Path, embedded_home: Path
) -> None:
    home = embedded_home
    daemon = await start_daemon(home=home, database_url=None)
    try:
        migrated = await run_cli("migrate", home=home)
        assert migrated.code == 0, migrated.stderr
        assert "another openwork daemon is running" in migrated.stdout
        assert "nothing to do" in migrated.stdout
        doctor = await run_cli("doctor", "--json", home=home)
        checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
        assert checks["database"]["verdict"] == "ok"
        assert "asked over its API" in checks["daemon"]["detail"]
        async with daemon.client() as client:
            assert (await client.get("/v1/health")).json()["database"] == "ok"
            workspace = tmp_path / "ws"
            workspace.mkdir()
            created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
            assert created.status_code == 201
    finally:
        assert await daemon.stop() == 0
    # with no daemon, migrate uses the embedded database itself (and takes the home's lock)
    alone = await run_cli("migrate", home=home, timeout=120)
    assert alone.code == 0, alone.stderr
    assert "0 applied now, schema current" in alone.stdout
