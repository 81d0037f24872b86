"""Per-call daemon overhead as the history grows, as a ratio to one orjson dump of the request.

Run: ``.venv/bin/python bench/history_scaling.py``. Starts ``openwork serve`` (a subprocess, its
own fresh database) against the fake OpenAI-compatible provider (zero delay), seeds sessions of
0 (the floor), 100, 1 000 and 10 000 stored messages (~300 bytes each, COPY), then runs turns of six model
calls (five ``read`` tool calls of small files, then text) on each. Measured from outside, per call:

- the daemon's gap: from the fake provider's last byte of call k's answer to the last byte of
  call k+1's request body (persisting call k, running its tool, sampling World State, preparing,
  encoding and sending the next request — the whole turn loop);
- the physical limit: one ``orjson.dumps`` of that call's ``ModelRequest`` (rebuilt from the
  stored messages), best of 5; and, for information, one dump of the parsed wire body.

Beside the gap, the daemon's CPU per call (every thread's run time from ``/proc/PID/task/*/
schedstat``, over its whole measured turns, which run one at a time) and its growth over the
session seeded with nothing, ÷ dump: the daemon's own history-dependent work, without the
waiting on sockets and schedulers that the wall-clock gap also holds.

Printed: gap ÷ dump (the literal figure of issue 13 §1: at 100 messages the dump takes ~10 µs,
so the fixed cost of a call dominates it) and the history-dependent part — the gap minus the gap
of a session seeded with nothing — ÷ dump; goal ≤ 3.0 at every size; the gap ≤ 10 ms.
Figures are medians over the measured calls; nothing here is asserted by the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the tests package

from bench.soak import turn as soak_turn
from openwork_chat_state.messages import CONTENT_BLOCKS, Message, Role, TextBlock, ToolDefinition
from openwork_core.models.port import ModelRequest
from openwork_core.storage.codec import encode_content
from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply, ToolCallSpec
from tests.support.daemon import Daemon, start_daemon
from tests.support.postgres import find_cluster

SIZES = (100, 1_000, 10_000)
TOOL_CALLS = 5
TURNS = 10
MESSAGE_TEXT = (
    "Some earlier part of the conversation, with code `x = f(y)` and ünïcode — "
    "long enough to look like a real message in a coding session, about 300 bytes. "
)


def _seed_rows(session_id: str, turn_id: str, count: int) -> list[tuple[object, ...]]:
    rows: list[tuple[object, ...]] = []
    for sequence in range(1, count + 1):
        role = Role.USER if sequence % 2 else Role.ASSISTANT
        text = f"{sequence}: " + MESSAGE_TEXT * 2
        content = encode_content(Message(role=role, content=(TextBlock(text=text),)))
        rows.append(
            (f"seed-{session_id}-{sequence}", session_id, turn_id, sequence, role.value, content)
        )
    return rows


async def seed(url: str, session_id: str, count: int) -> None:
    """One completed turn holding ``count`` alternating user / assistant messages."""
    if not count:
        return
    conn = await asyncpg.connect(url)
    try:
        async with conn.transaction():
            turn_id = f"seed-turn-{session_id}"
            await conn.execute(
                """INSERT INTO turns (id, session_id, client_request_id, sequence,
                                      resolved_provider_id, resolved_model_name, app_version,
                                      status, ended_at)
                   VALUES ($1, $2, $3, 1, 'default', 'fake-model', 'bench', 'completed', now())""",
                turn_id,
                session_id,
                f"seed-{session_id}",
            )
            await conn.copy_records_to_table(
                "messages",
                records=_seed_rows(session_id, turn_id, count),
                columns=("id", "session_id", "turn_id", "sequence", "role", "content"),
            )
    finally:
        await conn.close()


def script(tag: str) -> list[Reply]:
    calls = [
        Reply(tool_calls=(ToolCallSpec(f"call_{tag}_{i}", "read", {"path": f"notes{i}.md"}),))
        for i in range(TOOL_CALLS)
    ]
    return [*calls, Reply(text="done")]


def best_dump(body: object) -> float:
    times = []
    for _ in range(5):
        start = time.perf_counter()
        orjson.dumps(body)
        times.append(time.perf_counter() - start)
    return min(times)


@dataclass
class Measured:
    gaps: list[float] = field(default_factory=list)
    wire_dumps: list[float] = field(default_factory=list)
    request_dumps: list[float] = field(default_factory=list)
    request_bytes: int = 0
    cpu_ns: int = 0
    calls: int = 0


def cpu_ns(pid: int) -> int:
    """Nanoseconds every thread of ``pid`` has run on a CPU (``/proc/PID/task/*/schedstat``)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            total += int((task / "schedstat").read_text().split()[0])
    return total


async def measure(
    daemon: Daemon, fake: FakeProvider, sessions: dict[int, str], url: str
) -> dict[int, Measured]:
    """A warm-up turn on every session (its load and first prepare), then ``TURNS`` rounds of
    one turn per size, interleaved so that every size sees the same machine load."""
    results = {size: Measured() for size in sessions}
    bodies: dict[int, list[dict[str, Any]]] = {size: [] for size in sessions}
    async with daemon.client() as client:
        client.timeout = httpx.Timeout(300)
        for turn in range(TURNS + 1):
            for size, sid in sessions.items():
                before = len(fake.requests)
                fake.push(*script(f"{size}_{turn}"))
                ran = cpu_ns(daemon.process.pid)
                outcome = await soak_turn(client, sid, f"bench-{size}-{turn}", within=300)
                assert outcome["status"] == "completed", outcome
                ran = cpu_ns(daemon.process.pid) - ran
                if turn == 0:
                    continue
                requests = fake.requests
                answered = fake.answered_at
                measured = results[size]
                measured.cpu_ns += ran
                measured.calls += len(requests) - before
                for number in range(before + 2, len(requests) + 1):
                    request = requests[number - 1]
                    measured.gaps.append(request.received_at - answered[number - 1])
                    body = orjson.loads(request.raw)
                    measured.wire_dumps.append(best_dump(body))
                    bodies[size].append(body)
                    measured.request_bytes = len(request.raw)
    for size, sid in sessions.items():
        conversation = await stored_conversation(url, sid)
        for body in bodies[size]:
            results[size].request_dumps.append(best_dump(model_request(body, conversation)))
    return results


async def stored_conversation(url: str, session_id: str) -> list[Message]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT role, content::text AS content FROM messages WHERE session_id = $1"
            " ORDER BY sequence",
            session_id,
        )
    finally:
        await conn.close()
    return [
        Message(role=Role(r["role"]), content=tuple(CONTENT_BLOCKS.validate_json(r["content"])))
        for r in rows
    ]


def model_request(body: dict[str, Any], conversation: list[Message]) -> ModelRequest:
    """The ``ModelRequest`` the daemon sent as ``body`` (no compaction, no pruning here: its
    system parts, then the first stored messages, one wire message per stored message)."""
    wire = body["messages"]
    system = [m for m in wire if m["role"] == "system"]
    return ModelRequest(
        model=body["model"],
        messages=(
            *(Message(role=Role.SYSTEM, content=(TextBlock(text=m["content"]),)) for m in system),
            *conversation[: len(wire) - len(system)],
        ),
        tools=tuple(
            ToolDefinition(
                name=t["function"]["name"],
                description=t["function"]["description"],
                parameters=t["function"]["parameters"],
            )
            for t in body.get("tools", ())
        ),
        max_output_tokens=body.get("max_tokens"),
    )


async def start_profiler(pid: int, path: str) -> asyncio.subprocess.Process:
    """py-spy (``pip install py-spy`` in the venv) on the daemon, collapsed stacks to ``path``."""
    spy = Path(sys.executable).with_name("py-spy")
    return await asyncio.create_subprocess_exec(
        str(spy), "record", "--pid", str(pid), "--format", "raw", "--output", path, "--rate", "250"
    )


async def main(sizes: tuple[int, ...], profile: str | None) -> None:
    cluster = await find_cluster()
    await cluster.create_template()
    url = await cluster.new_database()
    with tempfile.TemporaryDirectory() as tmp, FakeProvider() as fake:
        root = Path(tmp)
        workspace = root / "ws"
        workspace.mkdir()
        for i in range(TOOL_CALLS):
            (workspace / f"notes{i}.md").write_text(f"# Notes {i}\n\nThings.\n", encoding="utf-8")
        env = provider_env(fake, OPENWORK_MODEL_CONTEXT_WINDOW="8000000")
        home = root / "home"
        daemon = await start_daemon(home=home, database_url=url, env=env)
        sessions: dict[int, str] = {}
        async with daemon.client() as client:
            for size in sizes:
                created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
                assert created.status_code == 201, created.text
                sessions[size] = str(created.json()["session_id"])
        await daemon.stop()
        for size, sid in sessions.items():
            await seed(url, sid, size)
        daemon = await start_daemon(home=home, database_url=url, env=env)
        spy = await start_profiler(daemon.process.pid, profile) if profile else None
        try:
            results = await measure(daemon, fake, sessions, url)
        finally:
            if spy is not None:
                spy.send_signal(signal.SIGINT)
                await spy.wait()
            await daemon.stop()
        assert fake.violations == [], fake.violations
    await cluster.drop_all()
    report(results)


def report(results: dict[int, Measured]) -> None:
    """``growth`` is the gap minus the gap of the session seeded with nothing: the part of the
    per-call cost that depends on the history (the fixed part — persisting the call, the tool,
    the HTTP round trip — is the same at every size). ``dump`` is one ``orjson.dumps`` of the
    call's ``ModelRequest`` (as bench/prepare.py and issue 13 measure it); ``wire`` one dump of
    the parsed wire body (plain dicts and strings: the cheapest form of the same bytes)."""
    print(
        f"{TURNS} turns × {TOOL_CALLS + 1} calls per size after a warm-up turn;"
        " medians over the calls after the first of each turn"
    )
    print(
        f"{'messages':>9} {'request':>10} {'gap':>9} {'growth':>9} {'dump':>9} {'wire':>8}"
        f" {'gap/dump':>9} {'growth/dump':>12} {'growth/wire':>12}"
    )
    floor = statistics.median(results[0].gaps)
    cpu_floor = results[0].cpu_ns / results[0].calls / 1e9
    worst = cpu_worst = 0.0
    cpu_rows = []
    for size, measured in results.items():
        gap = statistics.median(measured.gaps)
        dump = statistics.median(measured.request_dumps)
        wire = statistics.median(measured.wire_dumps)
        growth = gap - floor
        cpu = measured.cpu_ns / measured.calls / 1e9
        cpu_rows.append((size, cpu, (cpu - cpu_floor) / dump))
        if size:
            worst = max(worst, growth / dump)
            cpu_worst = max(cpu_worst, (cpu - cpu_floor) / dump)
        print(
            f"{size:>9} {measured.request_bytes / 1e6:>8.2f}MB {gap * 1e3:>7.2f}ms"
            f" {growth * 1e3:>7.2f}ms {dump * 1e3:>7.3f}ms {wire * 1e3:>6.3f}ms"
            f" {gap / dump:>9.1f} {growth / dump:>12.2f} {growth / wire:>12.2f}"
        )
    print()
    print("daemon CPU per call (every thread, its whole turns: /proc schedstat), the same growth")
    for size, cpu, ratio in cpu_rows:
        print(
            f"{size:>9} {cpu * 1e3:>9.2f}ms  growth {(cpu - cpu_floor) * 1e3:>6.2f}ms"
            f"  growth/dump {ratio:>6.2f}"
        )
    largest = max(results)
    print()
    print(f"history-dependent cost / dump, worst     = {worst:7.2f}   (goal <= 3.0)")
    print(f"  the same from daemon CPU, worst        = {cpu_worst:7.2f}   (goal <= 3.0)")
    print(
        f"gap at {largest} ÷ gap with no history = "
        f"{statistics.median(results[largest].gaps) / floor:7.2f}   (info)"
    )
    print(f"gap with no history                      = {floor * 1e3:7.2f} ms (goal <= 10 ms)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--profile", help="write py-spy collapsed stacks of the daemon here")
    args = parser.parse_args()
    asyncio.run(main((0, *sorted(set(args.sizes) - {0})), args.profile))
