"""Memory: the idle daemon's RSS and what each loaded idle session adds.

Run: ``.venv/bin/python bench/memory.py``. Starts ``openwork serve`` (its own fresh database)
against the fake OpenAI-compatible provider and prints, in the same run:

- bare: the RSS of a Python process that imported asyncio and answers HTTP (the floor);
- idle: the daemon's RSS once it answers and its SDK warm-up has finished, no session loaded
  (goal ≤ 100 MB);
- per session: after one warm-up turn on a throwaway session (the one-time costs), ``--sessions``
  sessions each run one short turn and stay loaded; (RSS after − RSS before) ÷ sessions, minus
  each session's stored Conversation (goal ≤ 50 KB plus its Conversation).

RSS is read from ``/proc/PID/status`` (VmRSS); nothing here is asserted by the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
from pathlib import Path

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests package

from bench.soak import rss_kib, turn
from bench.startup import BARE, BYTECODE, free_port, until_healthy, warmed_up
from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply
from tests.support.daemon import start_daemon
from tests.support.postgres import find_cluster


async def bare_rss() -> int:
    port = free_port()
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", BARE, str(port))
    try:
        await until_healthy(f"http://127.0.0.1:{port}", asyncio.get_running_loop().time() + 30)
        return rss_kib(process.pid)
    finally:
        process.terminate()
        await process.wait()


async def main(sessions: int) -> None:
    bare = await bare_rss()
    cluster = await find_cluster()
    await cluster.create_template()
    url = await cluster.new_database()
    with tempfile.TemporaryDirectory() as tmp, FakeProvider() as fake:
        root = Path(tmp)
        workspace = root / "ws"
        workspace.mkdir()
        fake.push(*(Reply(text=f"answer {i}") for i in range(sessions + 1)))
        env = BYTECODE | provider_env(
            fake, OPENWORK_SESSION_IDLE_SECONDS="36000", OPENWORK_MAX_LOADED_SESSIONS="10000"
        )
        daemon = await start_daemon(home=root / "home", database_url=url, env=env)
        pid = daemon.process.pid
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(30):
                    while not warmed_up(daemon.log_lines):  # noqa: ASYNC110 - its log
                        await asyncio.sleep(0.05)
            idle = rss_kib(pid)
            async with daemon.client() as client:

                async def new_session() -> str:
                    created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
                    return str(created.json()["session_id"])

                await turn(client, await new_session(), "warm")
                before = rss_kib(pid)
                ids = []
                for i in range(sessions):
                    ids.append(await new_session())
                    await turn(client, ids[-1], f"s{i}")
                after = rss_kib(pid)
            conn = await asyncpg.connect(url)
            try:
                stored = await conn.fetchval(
                    "SELECT sum(octet_length(content::text)) FROM messages"
                    " WHERE session_id = ANY($1::text[])",
                    ids,
                )
            finally:
                await conn.close()
        finally:
            await daemon.stop()
    await cluster.drop_all()
    per_session = (after - before) * 1024 / sessions
    conversation = int(stored or 0) / sessions
    print(f"bare Python RSS:                {bare / 1024:8.1f} MiB  (the floor)")
    print(f"idle daemon RSS:                {idle / 1024:8.1f} MiB  (goal <= 100 MB)")
    print(f"RSS after {sessions} loaded sessions: {after / 1024:8.1f} MiB")
    print(f"per loaded session:             {per_session / 1024:8.1f} KiB")
    print(f"  of which its Conversation:    {conversation / 1024:8.1f} KiB (stored JSON)")
    print()
    print(f"idle / bare                     = {idle / bare:6.2f}   (info)")
    print(
        f"per session - Conversation      = {(per_session - conversation) / 1024:6.1f} KiB"
        "   (goal <= 50 KB)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=100)
    args = parser.parse_args()
    asyncio.run(main(args.sessions))
