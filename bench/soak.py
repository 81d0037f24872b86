"""Soak: the daemon's memory over many sessions and many turns (faults issue, point 6).

Run: ``.venv/bin/python bench/soak.py [--sessions 1000] [--turns 1000]``. Starts `openwork serve`
on a fresh database of the local PostgreSQL with a scripted fake provider on loopback and
``OPENWORK_SESSION_IDLE_SECONDS=1``, then measures the daemon's RSS (``/proc/<pid>/status``):

* baseline: after start and one warm-up turn;
* 1 000 sessions × 1 turn, then the idle unloading: RSS after unloading ÷ baseline (goal ≤ 1.10);
* 1 000 turns on one session: RSS after ÷ RSS after the first 100 turns (goal: flat, ≤ 1.10; the
  Conversation itself grows by what the turns add, which is printed beside it).

Prints ratios; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

import asyncpg
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply
from tests.support.daemon import start_daemon
from tests.support.postgres import find_cluster
from tests.support.sse import open_events


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def turn(
    client: httpx.AsyncClient, sid: str, request_id: str, *, within: float = 60
) -> dict[str, Any]:
    """One turn, awaited on the session's events; its ``turn_finished`` outcome."""
    async with open_events(client, f"/v1/sessions/{sid}/events") as events:
        response = await client.post(
            f"/v1/sessions/{sid}/turns",
            json={"client_request_id": request_id, "input": [{"type": "text", "text": "hi"}]},
        )
        assert response.status_code == 202, response.text
        tid = response.json()["turn_id"]
        seen = await events.until(
            lambda e: e.turn_id == tid and e.type == "turn_finished", timeout=within
        )
    outcome = seen[-1].update["outcome"]
    assert isinstance(outcome, dict)
    return outcome


async def _loaded(conn: asyncpg.Connection, daemon_pid: int) -> int:
    count = await conn.fetchval(
        """SELECT count(*) FROM session_leases l JOIN daemons d ON d.id = l.owner_daemon_id
           WHERE d.pid = $1 AND d.stopped_at IS NULL""",
        daemon_pid,
    )
    return int(count)


async def _until_unloaded(conn: asyncpg.Connection, daemon_pid: int) -> None:
    """The daemon's idle timer runs in another process: a benchmark polls its leases."""
    while await _loaded(conn, daemon_pid):  # noqa: ASYNC110 - another process's timer
        await asyncio.sleep(0.5)


async def main(sessions: int, turns: int) -> None:
    cluster = await find_cluster()
    await cluster.create_template()
    url = await cluster.new_database()
    with tempfile.TemporaryDirectory() as tmp, FakeProvider() as fake:
        root = Path(tmp)
        workspace = root / "ws"
        workspace.mkdir()
        fake.push(*(Reply(text=f"answer {i}") for i in range(sessions + turns + 10)))
        env = provider_env(
            fake, OPENWORK_SESSION_IDLE_SECONDS="1", OPENWORK_SESSION_LEASE_SECONDS="3"
        )
        daemon = await start_daemon(home=root / "home", database_url=url, env=env)
        pid = daemon.process.pid
        conn = await asyncpg.connect(url)
        try:
            async with daemon.client() as client:

                async def new_session() -> str:
                    created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
                    return str(created.json()["session_id"])

                warm = await new_session()
                await turn(client, warm, "warm")
                await _until_unloaded(conn, pid)
                baseline = rss_kib(pid)
                for i in range(sessions):
                    await turn(client, await new_session(), f"s{i}")
                peak = rss_kib(pid)
                await _until_unloaded(conn, pid)
                after_unload = rss_kib(pid)
                print(f"sessions: {sessions} × 1 turn")
                print(f"  baseline RSS            {baseline / 1024:8.1f} MiB")
                print(f"  peak RSS (all loaded)   {peak / 1024:8.1f} MiB")
                print(f"  RSS after unloading     {after_unload / 1024:8.1f} MiB")
                print(f"  after ÷ baseline        {after_unload / baseline:8.2f}   (goal ≤ 1.10)")
                one = await new_session()
                for i in range(min(100, turns)):
                    await turn(client, one, f"t{i}")
                early = rss_kib(pid)
                for i in range(100, turns):
                    await turn(client, one, f"t{i}")
                late = rss_kib(pid)
                size = await conn.fetchval(
                    "SELECT sum(pg_column_size(content)) FROM messages WHERE session_id = $1", one
                )
                print(f"turns: {turns} on one session")
                print(f"  RSS after 100 turns     {early / 1024:8.1f} MiB")
                print(f"  RSS after {turns} turns    {late / 1024:8.1f} MiB")
                print(f"  late ÷ early            {late / early:8.2f}   (goal ≤ 1.10)")
                print(f"  stored Conversation     {int(size or 0) / 1024:8.1f} KiB")
        finally:
            await conn.close()
            await daemon.stop()
    await cluster.drop_all()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(main(args.sessions, args.turns))
