"""Start-up: process start → first 200 on ``/v1/health``, and the first model call after start.

Run: ``.venv/bin/python bench/startup.py``. In the same run it measures, each the median of
``--rounds`` fresh processes:

Every daemon runs with its bytecode written and read (``BYTECODE``), as an installed one does.

- bare: a Python process that imports asyncio and answers ``GET /v1/health`` on a socket (the
  physical floor of "a Python daemon answers");
- framework floor: FastAPI + uvicorn (with uvloop, asyncpg and structlog imported) answering
  one pydantic-validated route: the part of the start the daemon's own code does not decide;
- empty: ``openwork serve`` on a freshly migrated database;
- full: ``openwork serve`` on a database holding 1 000 sessions and 1 000 000 messages (made
  once per run with ``generate_series``: the start-up recovery must be index-driven);
- first vs second model call: a daemon with the fake OpenAI-compatible provider; after its
  warm-ups logged ``models.warmed_up``, ``storage.warmed_up`` and ``session_runtime.ready``,
  two sessions each run one turn; the figure is the time from ``POST …/turns`` to the fake
  provider holding the whole request body.

Goals (issue 13 §3): empty ≤ 0.5 s; full ÷ empty ≤ 1.1 (unchanged by the data); first call ÷
second call ≤ 1.1; (issue 23 point 3) empty ÷ framework floor ≤ 1.5. The health endpoint is
polled every 5 ms (it is another process); nothing here is asserted by the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import asyncpg
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests package

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply
from tests.support.daemon import TOKEN, start_daemon
from tests.support.postgres import find_cluster

BARE = """
import asyncio, sys
async def answer(reader, writer):
    await reader.readuntil(b"\\r\\n\\r\\n")
    writer.write(b"HTTP/1.1 200 OK\\r\\ncontent-length: 2\\r\\nconnection: close\\r\\n\\r\\n{}")
    await writer.drain()
    writer.close()
async def main():
    server = await asyncio.start_server(answer, "127.0.0.1", int(sys.argv[1]))
    await server.serve_forever()
asyncio.run(main())
"""

STACK = """
import sys
import asyncpg, structlog, uvicorn, uvloop
from fastapi import FastAPI
from pydantic import BaseModel
class Health(BaseModel):
    status: str
app = FastAPI()
@app.get("/v1/health", response_model=Health)
async def health() -> Health:
    return Health(status="ok")
config = uvicorn.Config(app, host="127.0.0.1", port=int(sys.argv[1]), log_config=None,
                        access_log=False, lifespan="off", http="h11", ws="none", loop="uvloop")
uvicorn.Server(config).run()
"""
"""The framework floor: the daemon's HTTP and database stack imported (FastAPI, uvicorn, uvloop,
asyncpg, structlog) and one pydantic-validated FastAPI route answering: what any daemon built on
it pays before its own modules, database and recovery."""

SEED = [
    """INSERT INTO sessions (id, working_directory)
       SELECT 'bench-s' || g, '/tmp/bench-workspace' FROM generate_series(1, 1000) g""",
    """INSERT INTO turns (id, session_id, client_request_id, sequence, resolved_provider_id,
                         resolved_model_name, app_version, status, ended_at)
       SELECT 'bench-t' || g, 'bench-s' || g, 'bench-r' || g, 1, 'default', 'fake-model',
              'bench', 'completed', now()
       FROM generate_series(1, 1000) g""",
    """INSERT INTO messages (id, session_id, turn_id, sequence, role, content)
       SELECT 'bench-m' || s || '-' || q, 'bench-s' || s, 'bench-t' || s, q,
              CASE WHEN q % 2 = 1 THEN 'user' ELSE 'assistant' END,
              jsonb_build_array(jsonb_build_object('type', 'text',
                  'text', 'message ' || q || ' of a long session, with some ordinary text'))
       FROM generate_series(1, 1000) s, generate_series(1, 1000) q""",
    "ANALYZE",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def until_healthy(url: str, deadline: float) -> None:
    async with httpx.AsyncClient(timeout=2) as client:
        while True:
            try:
                if (await client.get(f"{url}/v1/health")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not answer")
            await asyncio.sleep(0.005)


async def time_to_health(argv: list[str], env: Mapping[str, str], port: int) -> float:
    start = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *argv,
        env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        await until_healthy(f"http://127.0.0.1:{port}", time.monotonic() + 60)
        return time.perf_counter() - start
    finally:
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            await process.wait()


BYTECODE = {"PYTHONDONTWRITEBYTECODE": ""}
"""An installed package starts from compiled bytecode (pip compiles it at install); a shell with
``PYTHONDONTWRITEBYTECODE`` set would make every start compile the daemon's own modules again."""


def daemon_env(home: Path, database_url: str, port: int) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("OPENWORK_")}
    return (
        base
        | BYTECODE
        | {
            "OPENWORK_HOME": str(home),
            "OPENWORK_LISTEN": f"127.0.0.1:{port}",
            "OPENWORK_TOKEN": TOKEN,
            "OPENWORK_LOG_FORMAT": "json",
            "HOME": str(home / "user-home"),
            "OPENWORK_DATABASE_URL": database_url,
        }
    )


async def serve_times(
    root: Path, databases: tuple[str, ...], rounds: int
) -> tuple[list[float], ...]:
    """``rounds`` starts on each database, interleaved (a drift of the machine's load during the
    run then weighs on every database alike), after one uncounted start on each (it writes the
    bytecode)."""
    times: tuple[list[float], ...] = tuple([] for _ in databases)
    for number in range(-1, rounds):
        for index, database_url in enumerate(databases):
            port = free_port()
            env = daemon_env(root / f"home-{number}-{index}", database_url, port)
            argv = [sys.executable, "-m", "openwork_core.daemon", "serve"]
            elapsed = await time_to_health(argv, env, port)
            if number >= 0:
                times[index].append(elapsed)
    return times


WARM_UP_EVENTS = ("models.warmed_up", "storage.warmed_up", "session_runtime.ready")
"""What a daemon does once it listens so that its first turn pays nothing a second would not: the
SDKs (``runtime.py::warm_up_first_use``), the pool's prepared statements (``daemon/startup.py``) and the
session registry (``daemon/server.py``)."""


def warmed_up(log_lines: list[str]) -> bool:
    return all(any(event in line for line in log_lines) for event in WARM_UP_EVENTS)


async def first_and_second_call(root: Path, database_url: str) -> tuple[float, float]:
    workspace = root / "ws"
    workspace.mkdir(exist_ok=True)
    with FakeProvider([Reply(text="one"), Reply(text="two")]) as fake:
        home = root / f"home-calls-{time.monotonic_ns()}"
        env = provider_env(fake) | BYTECODE
        daemon = await start_daemon(home=home, database_url=database_url, env=env)
        try:
            with contextlib.suppress(TimeoutError):  # a daemon without the warm-up: 10 s
                async with asyncio.timeout(10):
                    while not warmed_up(daemon.log_lines):  # noqa: ASYNC110 - its log
                        await asyncio.sleep(0.01)
            figures = []
            async with daemon.client() as client:
                sids = []
                for _ in range(2):
                    created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
                    sids.append(created.json()["session_id"])
                for number, sid in enumerate(sids, start=1):
                    start = time.perf_counter()
                    response = await client.post(
                        f"/v1/sessions/{sid}/turns",
                        json={
                            "client_request_id": f"call-{number}",
                            "input": [{"type": "text", "text": "hi"}],
                        },
                    )
                    assert response.status_code == 202, response.text
                    request = (await fake.wait_for_requests(number, timeout=60))[number - 1]
                    figures.append(request.received_at - start)
        finally:
            await daemon.stop()
    return figures[0], figures[1]


async def main(rounds: int) -> None:
    cluster = await find_cluster()
    await cluster.create_template()
    empty = await cluster.new_database()
    full = await cluster.new_database()
    seeded = time.perf_counter()
    conn = await asyncpg.connect(full)
    try:
        for statement in SEED:
            await conn.execute(statement)
        messages = await conn.fetchval("SELECT count(*) FROM messages")
    finally:
        await conn.close()
    seeded = time.perf_counter() - seeded
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            bare, stack = [], []
            for _ in range(rounds):
                port = free_port()
                bare.append(await time_to_health([sys.executable, "-c", BARE, str(port)], {}, port))
                port = free_port()
                argv = [sys.executable, "-c", STACK, str(port)]
                stack.append(await time_to_health(argv, dict(os.environ) | BYTECODE, port))
            empty_times, full_times = await serve_times(root, (empty, full), rounds)
            calls = [await first_and_second_call(root, empty) for _ in range(rounds)]
    finally:
        await cluster.drop_all()
    b, st, e, f = (statistics.median(x) for x in (bare, stack, empty_times, full_times))
    first = statistics.median(c[0] for c in calls)
    second = statistics.median(c[1] for c in calls)
    print(f"seeded {messages} messages in 1 000 sessions in {seeded:.1f} s")
    print(f"bare Python answers:          {b * 1e3:7.0f} ms  (the floor)")
    print(f"FastAPI + uvicorn answers:    {st * 1e3:7.0f} ms  (the framework floor)")
    print(f"serve, empty database:        {e * 1e3:7.0f} ms  (goal <= 500 ms)")
    print(f"serve, 1 000 000 messages:    {f * 1e3:7.0f} ms")
    print(f"first model call after start: {first * 1e3:7.1f} ms")
    print(f"second model call:            {second * 1e3:7.1f} ms")
    print()
    print(f"empty / bare                  = {e / b:5.2f}   (info)")
    print(f"empty / framework floor       = {e / st:5.2f}   (goal <= 1.50, issue 23 point 3)")
    print(f"full / empty                  = {f / e:5.2f}   (goal <= 1.10)")
    print(f"first call / second call      = {first / second:5.2f}   (goal <= 1.10)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.rounds))
