"""The kill -9 matrix (faults issue, point 7; session-runtime.md §10, storage.md §3–§4): the daemon
SIGKILLs itself at each named fault point (``OPENWORK_FAULTPOINT``), twice per point, and
after every restart:

- no acknowledged message is lost (every 202 turn exists with its user message);
- nothing is duplicated and per-session sequences are gapless;
- no turn is left running, and nothing is half-written (no tool result without its stored
  call, each turn's tool-call counter matching its stored calls);
- the crash windows of docs/performance.md "One transaction per steady call": a response of
  effect-free calls killed before its one write left nothing of that model call; one with an
  effectful call left the call durable, answered ``interrupted`` in the next request;
- the next request is legal (every tool call answered) and carries the retained World State with
  its replacement notice (context-window.md §3 restart replay).

Each point is its own test (with its own daemon, home, database and fake provider), so xdist's
workers run the points side by side."""

from __future__ import annotations

import asyncio
import math
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import asyncpg
import httpx
import pytest

from openwork_core.context.normalize import INTERRUPTED_RESULT_TEXT
from openwork_core.context.world_state.project_instructions import (
    PROJECT_INSTRUCTIONS_REPLACEMENT_NOTICE,
)
from openwork_tools.faults import FAULT_POINTS
from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply, Step, ToolCallSpec
from tests.support.daemon import Daemon, start_daemon
from tests.support.postgres import PgCluster
from tests.support.sse import open_events
from tests.support.wire import chat_user_texts
from tests.unit.compaction.compaction_support import valid_summary

REPETITIONS = 2
"""Twice: the second kill meets a session that was already killed and recovered once."""


@dataclass
class Point:
    """One fault point's run: its scenario pushes the fake's steps and drives the daemon until
    the fault point kills it."""

    name: str
    root: Path
    database_url: str
    fake: FakeProvider = field(default_factory=FakeProvider)
    acknowledged: list[str] = field(default_factory=list)
    session: str = ""
    small_window: str | None = None
    progress: list[str] = field(default_factory=list)

    @property
    def workspace(self) -> Path:
        return self.root / "ws"

    @property
    def home(self) -> Path:
        return self.root / "home"

    def env(self, *, armed: bool) -> dict[str, str]:
        extra = {"OPENWORK_FAULTPOINT": self.name} if armed else {}
        if self.small_window is not None:
            extra |= {
                "OPENWORK_MODEL_CONTEXT_WINDOW": self.small_window,
                "OPENWORK_MODEL_MAX_OUTPUT_TOKENS": "1000",
            }
        return provider_env(self.fake, **extra)


async def _post_turn(point: Point, client: httpx.AsyncClient, text: str, request_id: str) -> None:
    """POST a turn; a 202 is recorded as acknowledged (the daemon may die before answering)."""
    try:
        response = await client.post(
            f"/v1/sessions/{point.session}/turns",
            json={"client_request_id": request_id, "input": [{"type": "text", "text": text}]},
        )
    except httpx.TransportError:
        return
    assert response.status_code == 202, response.text
    point.acknowledged.append(response.json()["turn_id"])


def _turn_scenario(
    *steps: Callable[[int], Step],
) -> Callable[[Point, httpx.AsyncClient, int], Awaitable[None]]:
    """The fake's steps for repetition ``rep`` (tool call ids are unique per session, as a real
    provider's are)."""

    async def run(point: Point, client: httpx.AsyncClient, rep: int) -> None:
        point.fake.push(*(step(rep) for step in steps))
        await _post_turn(point, client, f"work {rep}", f"{point.name}-{rep}")

    return run


def _text(text: str, chunk_chars: int = 4) -> Callable[[int], Step]:
    return lambda _rep: Reply(text=text, chunk_chars=chunk_chars)


def _call(name: str, arguments: dict[str, object]) -> Callable[[int], Step]:
    return lambda rep: Reply(tool_calls=(ToolCallSpec(f"call_{name}_{rep}", name, arguments),))


async def _compact(point: Point, client: httpx.AsyncClient, rep: int) -> None:
    point.fake.push(Reply(text=valid_summary(), chunk_chars=200))
    try:
        await client.post(f"/v1/sessions/{point.session}/compact")
    except httpx.TransportError:
        return


async def _watched(point: Point, client: httpx.AsyncClient, rep: int) -> None:
    point.fake.push(Reply(text="watched answer"))
    async with open_events(client, f"/v1/sessions/{point.session}/events") as events:
        await _post_turn(point, client, f"watched {rep}", f"{point.name}-{rep}")
        try:
            await events.until(lambda e: False, timeout=30)
        except (httpx.TransportError, httpx.RemoteProtocolError):
            return


def _big_read() -> Callable[[Point, httpx.AsyncClient, int], Awaitable[None]]:
    """A read that crosses the small window's threshold: pruning advances the watermark. Each
    repetition uses a fresh session, so the previous one's compaction does not change the path."""
    turn = _turn_scenario(
        _call("read", {"path": "big.txt"}),
        _text(valid_summary(), 400),
        _text("All summarised."),
    )

    async def run(point: Point, client: httpx.AsyncClient, rep: int) -> None:
        created = await client.post("/v1/sessions", json={"workspace": str(point.workspace)})
        point.session = created.json()["session_id"]
        point.fake.push(Reply(text="a first answer"))
        await _post_turn(point, client, "hi", f"{point.name}-first-{rep}")
        await _settle(client, point.session)
        await turn(point, client, rep)

    return run


async def _settle(client: httpx.AsyncClient, sid: str) -> None:
    async with open_events(client, f"/v1/sessions/{sid}/events") as events:
        snapshot = (await client.get(f"/v1/sessions/{sid}")).json()["snapshot"]
        if snapshot["runtime"]["state"] == "running":
            await events.until(lambda e: e.type == "turn_finished", timeout=30)


SCENARIOS: dict[str, Callable[[Point, httpx.AsyncClient, int], Awaitable[None]]] = {
    "turn_row_committed": _turn_scenario(_text("never")),
    "world_state_row_committed": _turn_scenario(_text("never")),
    "model_streaming": _turn_scenario(_text("a streamed answer", 3)),
    # a response that may have an effect: its assistant message is written before the tool runs
    "assistant_committed": _turn_scenario(_call("write", {"path": "out.txt", "content": "x\n"})),
    # a response of effect-free calls: written with its results after they ran, in one statement
    "tool_result_before_commit": _turn_scenario(_call("read", {"path": "AGENTS.md"})),
    "tool_result_committed": _turn_scenario(_call("read", {"path": "AGENTS.md"})),
    "read_only_tool_running": _turn_scenario(_call("read", {"path": "AGENTS.md"})),
    "bash_running": _turn_scenario(_call("bash", {"command": "echo started; sleep 20"})),
    "summary_streaming": _compact,
    "checkpoint_committed": _compact,
    "watermark_advanced": _big_read(),
    "sub_agent_spawning": _turn_scenario(
        lambda rep: Reply(
            tool_calls=(
                ToolCallSpec(
                    f"call_spawn_{rep}",
                    "spawn_agent",
                    {"task_name": f"look_{rep}", "message": "look around"},
                ),
            )
        )
    ),
    "sse_attached": _watched,
}


async def _check_database(point: Point) -> None:
    conn = await asyncpg.connect(point.database_url)
    try:
        running = await conn.fetchval("SELECT count(*) FROM turns WHERE status = 'running'")
        assert running == 0, f"{point.name}: {running} turns left running"
        for tid in point.acknowledged:
            users = await conn.fetchval(
                """SELECT count(*) FROM messages
                   WHERE turn_id = $1 AND role = 'user' AND message_kind = 'normal'""",
                tid,
            )
            assert users == 1, f"{point.name}: acknowledged turn {tid} has {users} user messages"
        for row in await conn.fetch(
            "SELECT session_id, array_agg(sequence ORDER BY sequence) AS s FROM messages "
            "GROUP BY session_id"
        ):
            sequences = list(row["s"])
            assert sequences == list(range(1, len(sequences) + 1)), (point.name, sequences)
        duplicated = await conn.fetchval(
            """SELECT count(*) FROM (SELECT turn_id, content::text FROM messages
               WHERE role = 'assistant' GROUP BY turn_id, content::text HAVING count(*) > 1) d"""
        )
        assert duplicated == 0, f"{point.name}: duplicated assistant messages"
        # nothing half-written: every tool result answers a call of its turn's stored responses,
        # and each turn's tool-call counter is exactly the calls its stored responses hold
        orphans = await conn.fetchval(
            """SELECT count(*) FROM messages r WHERE r.role = 'tool' AND NOT EXISTS (
                   SELECT 1 FROM messages a, jsonb_array_elements(a.content) b
                   WHERE a.turn_id = r.turn_id AND a.role = 'assistant'
                     AND b->>'type' = 'tool_call' AND b->>'id' = r.provider_call_id)"""
        )
        assert orphans == 0, f"{point.name}: {orphans} tool results without their call"
        miscounted = await conn.fetch(
            """SELECT t.id, t.tool_call_count, (
                   SELECT count(*) FROM messages a, jsonb_array_elements(a.content) b
                   WHERE a.turn_id = t.id AND a.role = 'assistant'
                     AND b->>'type' = 'tool_call') AS stored
               FROM turns t"""
        )
        assert all(r["tool_call_count"] == r["stored"] for r in miscounted), (
            point.name,
            [dict(r) for r in miscounted],
        )
    finally:
        await conn.close()


_CRASH_WINDOWS = (
    "read_only_tool_running",
    "tool_result_before_commit",
    "assistant_committed",
    "bash_running",
)


async def _check_crash_window(point: Point, rep: int, before: int) -> None:
    """What the killed turn left (session-runtime.md §10): a response of effect-free calls
    killed before its write left nothing of that model call (no assistant message, result or
    usage row); one that may have an effect left its tool call durable, without a result, and
    the next request (from ``before`` on) answers it with the synthesised ``interrupted``."""
    if point.name not in _CRASH_WINDOWS:
        return
    conn = await asyncpg.connect(point.database_url)
    try:
        killed, status = await conn.fetchrow(
            "SELECT id, status FROM turns WHERE client_request_id = $1", f"{point.name}-{rep}"
        )
        rows = await conn.fetch(
            "SELECT role, content::text AS content FROM messages WHERE turn_id = $1 "
            "AND role IN ('assistant', 'tool') ORDER BY sequence",
            killed,
        )
        usage = await conn.fetchval(
            "SELECT count(*) FROM model_call_usage WHERE turn_id = $1", killed
        )
    finally:
        await conn.close()
    assert status == "interrupted", (point.name, status)
    if point.name in ("read_only_tool_running", "tool_result_before_commit"):
        assert (rows, usage) == ([], 0), (point.name, [dict(r) for r in rows], usage)
    if point.name in ("assistant_committed", "bash_running"):
        assert [r["role"] for r in rows] == ["assistant"], (point.name, [dict(r) for r in rows])
        assert usage == 1, (point.name, usage)
        call_id = f"call_{'write' if point.name == 'assistant_committed' else 'bash'}_{rep}"
        answered = [
            m
            for body in point.fake.bodies[before:]
            for m in cast(list[dict[str, object]], body.get("messages", []))
            if m.get("role") == "tool" and m.get("tool_call_id") == call_id
        ]
        assert answered, (point.name, "the killed call is not answered in the next request")
        assert INTERRUPTED_RESULT_TEXT in str(answered[-1]["content"]), (point.name, answered)


async def _next_turn_is_legal_and_replays_world_state(point: Point, daemon: Daemon) -> None:
    before = len(point.fake.requests)
    if point.small_window is not None:  # the small window compacts before answering
        point.fake.push(Reply(text=valid_summary(), chunk_chars=400))
    point.fake.push(Reply(text="after the restart"))
    async with (
        daemon.client() as client,
        open_events(client, f"/v1/sessions/{point.session}/events") as events,
    ):
        response = await client.post(
            f"/v1/sessions/{point.session}/turns",
            json={
                "client_request_id": f"{point.name}-check-{len(point.acknowledged)}",
                "input": [{"type": "text", "text": "still there?"}],
            },
        )
        assert response.status_code == 202, (point.name, response.text)
        tid = response.json()["turn_id"]
        point.acknowledged.append(tid)
        ended = await events.until(
            lambda e: e.turn_id == tid and e.type == "turn_finished", timeout=60
        )
    assert ended[-1].update["outcome"]["status"] == "completed", (point.name, ended[-1].update)
    assert point.fake.violations == [], (point.name, point.fake.violations)
    request = point.fake.bodies[before:][-1]
    texts = chat_user_texts(request)
    replayed = texts[texts.index("still there?") + 1 :]
    instructions = [t for t in replayed if "Keep answers short." in t]
    assert instructions, (point.name, [t[:60] for t in replayed])
    if not await _has_checkpoint(point):  # retained in the Conversation: re-sent as a replacement
        assert instructions[0].startswith(PROJECT_INSTRUCTIONS_REPLACEMENT_NOTICE), (
            point.name,
            instructions[0][:80],
        )


async def _has_checkpoint(point: Point) -> bool:
    conn = await asyncpg.connect(point.database_url)
    try:
        found = await conn.fetchval(
            "SELECT count(*) FROM conversation_compactions WHERE session_id = $1", point.session
        )
    finally:
        await conn.close()
    return bool(found)


async def _prepare(point: Point) -> None:
    point.workspace.mkdir(parents=True)
    (point.workspace / "AGENTS.md").write_text("Keep answers short.\n")
    daemon = await start_daemon(
        home=point.home, database_url=point.database_url, env=point.env(armed=False)
    )
    try:
        async with daemon.client() as client:
            created = await client.post("/v1/sessions", json={"workspace": str(point.workspace)})
            point.session = created.json()["session_id"]
            if point.name == "watermark_advanced":
                (point.workspace / "big.txt").write_text(("y" * 79 + "\n") * 300)
                base = (await client.get(f"/v1/sessions/{point.session}/context")).json()["budget"][
                    "estimated_input_tokens"
                ]
                point.small_window = str(math.ceil((base + 600 + 1_000 + 1_500) / 0.85) + 1_000)
            point.fake.push(Reply(text="a first answer"))
            first = await client.post(
                f"/v1/sessions/{point.session}/turns",
                json={"client_request_id": "first", "input": [{"type": "text", "text": "hi"}]},
            )
            assert first.status_code == 202, (first.status_code, first.text)
            point.acknowledged.append(first.json()["turn_id"])
            async with open_events(client, f"/v1/sessions/{point.session}/events") as events:
                if (await client.get(f"/v1/sessions/{point.session}")).json()["snapshot"][
                    "runtime"
                ]["state"] == "running":
                    await events.until(lambda e: e.type == "turn_finished", timeout=30)
    finally:
        assert await daemon.stop() == 0


async def _run_point(point: Point) -> None:
    await _prepare(point)
    for rep in range(REPETITIONS):
        armed = await start_daemon(
            home=point.home, database_url=point.database_url, env=point.env(armed=True)
        )
        point.progress.append(f"rep {rep}: armed")
        point.fake.clear()
        try:
            async with armed.client() as client:
                await SCENARIOS[point.name](point, client, rep)
            point.progress.append(f"rep {rep}: scenario driven")
            async with asyncio.timeout(60):
                code = await armed.process.wait()
        finally:  # a daemon that never reached its fault point must not outlive the test
            await armed.stop(signal.SIGKILL)
        assert code == -9, f"{point.name}: the daemon did not die at its fault point ({code})"
        clean = await start_daemon(
            home=point.home, database_url=point.database_url, env=point.env(armed=False)
        )
        point.progress.append(f"rep {rep}: restarted")
        point.fake.clear()
        try:
            await _check_database(point)
            before = len(point.fake.requests)
            await _next_turn_is_legal_and_replays_world_state(point, clean)
            await _check_crash_window(point, rep, before)
            point.progress.append(f"rep {rep}: checked")
            await _check_database(point)
        finally:
            assert await clean.stop() == 0


def test_every_fault_point_has_its_kill_scenario() -> None:
    """The matrix below covers every named fault point of the product."""
    assert set(SCENARIOS) == set(FAULT_POINTS) and len(FAULT_POINTS) >= 12


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", FAULT_POINTS)
async def test_a_kill_9_at_the_fault_point_loses_and_duplicates_nothing(
    name: str, tmp_path: Path, pg_cluster: PgCluster
) -> None:
    """One item per fault point (issue 23 point 8), so the workers share the matrix out."""
    point = Point(name, tmp_path / name, await pg_cluster.new_database())
    point.fake.start()
    try:
        await _run_point(point)
    except BaseException as failure:
        raise AssertionError(f"{failure!r} after {point.progress}") from failure
    finally:
        point.fake.stop()
