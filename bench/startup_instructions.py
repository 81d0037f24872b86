"""Start-up in instructions: what ``openwork serve`` executes before it listens, counted by
valgrind (cachegrind, no cache simulation), against the framework floor in the same run.

Run: ``.venv/bin/python bench/startup_instructions.py`` (needs ``valgrind``; ~2 minutes). The
wall-clock figures of ``bench/startup.py`` swing by 2-3x on a shared machine; an instruction count
does not move with other processes' load (±0.1 % between runs), so it shows what a change to the
start path saves. Each figure is the median of ``--rounds`` fresh interpreters:

- bare: ``import asyncio``;
- framework floor: asyncpg, structlog, uvicorn, uvloop and FastAPI imported and one
  pydantic-validated route added (``startup.py``'s floor, without serving it);
- daemon: the pre-listen path of ``daemon/server.py::_serve_on`` on a freshly migrated database —
  structlog as ``serve`` imports it, settings, logging, the pool and migrations, the sandbox probe,
  ``OpenWorkCore`` and its ``start`` (restart correction), ``create_app``. It calls the same functions as ``_serve_on``, in its order; it
  exits at once after the app is built (uvicorn's own start and the first request are the
  floor's too).

Nothing here is asserted by the test suite."""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests package

from tests.support.postgres import PgCluster, find_cluster

BARE = "import asyncio\n"

FLOOR = """
import os
import asyncpg, structlog, uvicorn, uvloop
from fastapi import FastAPI
from pydantic import BaseModel
class Health(BaseModel):
    status: str
app = FastAPI()
@app.get("/v1/health", response_model=Health)
async def health() -> Health:
    return Health(status="ok")
os._exit(0)
"""

DAEMON = """
import os, sys
import asyncio
import uvloop
from openwork_core.cli import server_run  # the modules `openwork serve` imports first
from openwork_core.config import load_settings


async def main() -> None:
    from openwork_core.daemon import server as s

    settings = load_settings()
    s.configure_logging(settings.log_format, log_dir=settings.home / "logs")
    async with s.open_database(settings) as database:
        async with database.pool.acquire() as conn:
            await s.apply_migrations(conn)
        store = s.PostgresStore(database.pool)
        sandbox = await s.probe_sandbox()
        core = s.OpenWorkCore(
            store=store,
            home=settings.home,
            sandbox=sandbox,
            app_version=s.app_version(),
            skill_root=s.default_skill_root(),
            identity=s.daemon_identity("http://127.0.0.1:1", settings.home),
            lease_seconds=settings.session_lease_seconds,
            load_limits=s.LoadLimits(
                idle_seconds=settings.session_idle_seconds,
                max_loaded=settings.max_loaded_sessions,
            ),
        )
        await core.start()
        s.create_app(
            core,
            token="t",
            allowed_origins=settings.origins,
            allow_remote=False,
            version=s.app_version(),
            shutdown=asyncio.Event(),
            max_body_bytes=settings.max_body_bytes,
            max_input_chars=settings.max_input_chars,
        )
        await store.list_providers()
        os._exit(0)


with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
    runner.run(main())
"""


def instructions(code: str, env: dict[str, str]) -> int:
    done = subprocess.run(
        [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            sys.executable,
            "-c",
            code,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if found is None:
        raise RuntimeError(f"valgrind gave no count:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def median_of(code: str, env: dict[str, str], rounds: int) -> float:
    instructions(code, env)  # writes the bytecode, as an installed package has it
    return statistics.median(instructions(code, env) for _ in range(rounds))


async def migrated_database() -> tuple[str, PgCluster]:
    cluster = await find_cluster()
    await cluster.create_template()
    return await cluster.new_database(), cluster


def main(rounds: int) -> None:
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed")
    url, cluster = asyncio.run(migrated_database())
    try:
        with tempfile.TemporaryDirectory() as home:
            base = {k: v for k, v in os.environ.items() if not k.startswith("OPENWORK_")}
            base.pop("PYTHONDONTWRITEBYTECODE", None)
            daemon_env = base | {
                "OPENWORK_HOME": home,
                "OPENWORK_LISTEN": "127.0.0.1:1",
                "OPENWORK_TOKEN": "t",
                "OPENWORK_LOG_FORMAT": "json",
                "HOME": home,
                "OPENWORK_DATABASE_URL": url,
            }
            bare = median_of(BARE, base, rounds)
            floor = median_of(FLOOR, base, rounds)
            daemon = median_of(DAEMON, daemon_env, rounds)
    finally:
        asyncio.run(cluster.drop_all())
    print(f"bare Python:                {bare / 1e6:7.0f} M instructions")
    print(f"framework floor:            {floor / 1e6:7.0f} M instructions")
    print(f"daemon before it listens:   {daemon / 1e6:7.0f} M instructions")
    print()
    print(f"daemon / framework floor    = {daemon / floor:5.2f}   (info)")
    print(f"daemon beyond the floor     = {(daemon - floor) / 1e6:5.0f} M   (info)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    main(parser.parse_args().rounds)
