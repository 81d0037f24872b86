"""The daemon's event loop while a provider streams a 20 MB tool-call argument (issue 22 point 6).

Run: ``.venv/bin/python bench/bounded_output.py``. Starts ``openwork serve`` (a subprocess, its
own fresh database) against the fake provider, one provider per wire protocol (OpenAI Chat
Completions, OpenAI Responses, Anthropic Messages). For each protocol and each shape of the
argument — ``deltas`` (20 MB of ``write`` content in 64 KiB argument deltas) and ``one event``
(all of it in one delta, one server-sent event) — a separate poller process (so that neither the
fake provider's thread nor this process's loop holds it back) asks ``GET /v1/health`` back to
back, first for ``IDLE_S`` with nothing running, then from the turn's start to its end. Each
provider first runs one ordinary turn, so that no row pays for importing its SDK.

Printed per row: the idle p99, the p99 and the worst answer while the argument streams, the turn's
time and failure code, and p99 ÷ limit, the limit being ``LIMIT_FACTOR`` × the idle p99 of the
same run (goal ≤ 1.0); the turn must fail ``model_error`` (the provider protocol error) within
seconds. Nothing here is asserted by the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply, ToolCallSpec
from tests.support.daemon import TOKEN, run_turn_and_wait, start_daemon
from tests.support.postgres import find_cluster

KINDS = ("openai-chat", "openai-responses", "anthropic")
SIZE = 20 * 1000 * 1000
SHAPES = {"deltas": 64 * 1024, "one event": SIZE + 100}
IDLE_S = 2.0
LIMIT_FACTOR = 10.0

POLLER = """
import asyncio, json, sys, time
import httpx

async def main(url, token):
    latencies = []
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {token}"}) as c:
        reader = asyncio.StreamReader()
        loop = asyncio.get_running_loop()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        stop = asyncio.ensure_future(reader.read())
        sys.stdout.write("ready\\n"); sys.stdout.flush()
        while not stop.done():
            start = time.perf_counter()
            response = await c.get("/v1/health")
            latencies.append(time.perf_counter() - start)
            assert response.status_code == 200, response.status_code
    print(json.dumps(latencies))

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def start_poller(url: str) -> asyncio.subprocess.Process:
    """A process asking ``/v1/health`` back to back until its stdin closes (``latencies``)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        POLLER,
        url,
        TOKEN,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    async with asyncio.timeout(30):
        assert await process.stdout.readline() == b"ready\n"
    return process


async def latencies(poller: asyncio.subprocess.Process) -> list[float]:
    assert poller.stdin is not None
    poller.stdin.close()
    async with asyncio.timeout(60):
        out, _ = await poller.communicate()
    return [float(v) for v in json.loads(out)]


def p99(values: list[float]) -> float:
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[98]


async def row(
    client: httpx.AsyncClient, url: str, sid: str, fake: FakeProvider, shape: str, n: int
) -> tuple[float, float, float, float, str, int]:
    idle = await start_poller(url)
    await asyncio.sleep(IDLE_S)  # the idle sample's length: nothing to wait for
    idle_latencies = await latencies(idle)
    content = "x" * SIZE
    call = ToolCallSpec("call_big", "write", {"path": "big.txt", "content": content})
    fake.push(Reply(tool_calls=(call,), chunk_chars=SHAPES[shape]))
    loaded = await start_poller(url)
    started = time.perf_counter()
    turn_id, _ = await run_turn_and_wait(client, sid, "write it", f"req-{n}")
    took = time.perf_counter() - started
    loaded_latencies = await latencies(loaded)
    turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
    return (
        p99(idle_latencies),
        p99(loaded_latencies),
        max(loaded_latencies),
        took,
        str(turn.get("error_code") or turn["status"]),
        len(loaded_latencies),
    )


async def main(kinds: tuple[str, ...]) -> None:
    cluster = await find_cluster()
    await cluster.create_template()
    database = await cluster.new_database()
    try:
        with FakeProvider() as fake, tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            daemon = await start_daemon(
                home=root / "home", database_url=database, env=provider_env(fake)
            )
            try:
                async with daemon.client() as client:
                    print(
                        f"{'protocol':17} {'shape':10} {'idle p99':>9} {'p99':>9} {'worst':>9}"
                        f" {'limit':>9} {'p99/limit':>9} {'turn':>8} {'polls':>6}  code"
                    )
                    n = 0
                    for kind in kinds:
                        body = {"kind": kind, "base_url": fake.url, "models": [{"name": "m"}]}
                        assert (await client.put(f"/v1/providers/{kind}", json=body)).is_success
                        workspace = root / kind
                        workspace.mkdir()
                        created = await client.post(
                            "/v1/sessions",
                            json={"workspace": str(workspace), "provider": kind, "model": "m"},
                        )
                        sid = created.json()["session_id"]
                        n += 1  # a first turn: the kind's SDK imported before anything is timed
                        fake.push(Reply(text="ready"))
                        await run_turn_and_wait(client, sid, "hello", f"req-{n}")
                        for shape in SHAPES:
                            n += 1
                            idle, loaded, worst, took, code, polls = await row(
                                client, daemon.url, sid, fake, shape, n
                            )
                            limit = idle * LIMIT_FACTOR
                            print(
                                f"{kind:17} {shape:10} {idle * 1e3:7.2f}ms {loaded * 1e3:7.2f}ms"
                                f" {worst * 1e3:7.1f}ms {limit * 1e3:7.2f}ms {loaded / limit:9.2f}"
                                f" {took:7.2f}s {polls:6}  {code}"
                            )
            finally:
                await daemon.stop()
    finally:
        await cluster.drop_all()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--kind", action="append", choices=KINDS, help="default: all three")
    asyncio.run(main(tuple(parser.parse_args().kind or KINDS)))
