"""One transaction per steady model call (issue 13 point 2; docs/performance.md "One
transaction per steady call"): a response whose calls are all effect-free is written after they
ran, in one write with their results; a response that may have an effect is written before any
of its tools runs (storage.md §3). The events keep ``draft_cleared`` meaning "the message is
durable and in Chat State"."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from openwork_chat_state.item import MessageKind
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse, ToolCallLike
from openwork_core.session.input import TextInput
from openwork_core.session.runner.tool_step import TERMINATED_TEXT
from openwork_core.session.storage import StepWrite
from openwork_core.session.updates import (
    DraftCleared,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
)
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import StoredMessage, TurnRecord, TurnStatus
from openwork_tools.context import ToolCallContext
from openwork_tools.registry import FinalizedToolset
from openwork_tools.results import ToolResult
from tests.support import store_rows
from tests.support.runtime import Runtime, runtime


async def _stored_calls(store: PostgresStore, sid: str) -> set[str]:
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            """SELECT b->>'id' AS id FROM messages a, jsonb_array_elements(a.content) b
               WHERE a.session_id = $1 AND a.role = 'assistant' AND b->>'type' = 'tool_call'""",
            sid,
        )
    return {r["id"] for r in rows}


class _Writes:
    """The storage port's writes of one session's responses and tool results, in order (World
    State rows and a lone submission counter are not counted)."""

    def __init__(self, rt: Runtime, sid: str) -> None:
        self.calls: list[str] = []
        storage = rt.services[sid].storage
        write = storage.append

        async def counted(turn_id: str, step: StepWrite) -> Any:
            if step.response is not None:
                self.calls.append("response with results" if len(step.messages) > 1 else "response")
            elif any(m.kind is not MessageKind.WORLD_STATE for m in step.messages):
                self.calls.append("result")
            return await write(turn_id, step)

        storage.append = counted  # type: ignore[method-assign]


class _StoredAtRun:
    """For each registry tool run of ``sid``, in order: the tool call ids stored at that
    moment."""

    def __init__(self) -> None:
        self.sid = ""
        self.seen: list[set[str]] = []


@pytest.fixture
def stored_at_run(monkeypatch: pytest.MonkeyPatch, store: PostgresStore) -> _StoredAtRun:
    observed = _StoredAtRun()
    real = FinalizedToolset.call

    async def call(
        self: FinalizedToolset, name: str, input_json: str, context: ToolCallContext
    ) -> ToolResult:
        observed.seen.append(await _stored_calls(store, observed.sid))
        return await real(self, name, input_json, context)

    monkeypatch.setattr(FinalizedToolset, "call", call)
    return observed


@dataclass
class _Turn:
    turn_id: str
    kinds: list[type]
    writes: list[str]
    stored: list[StoredMessage]
    record: TurnRecord


async def _one_step(
    store: PostgresStore, tmp_path: Path, observed: _StoredAtRun, calls: tuple[ToolCallLike, ...]
) -> _Turn:
    """A turn of one response with ``calls`` then a final answer, in a workspace with a.txt."""
    model = ScriptedModel([ScriptedResponse(tool_calls=calls), ScriptedResponse(text="done")])
    async with runtime(store, tmp_path, model) as rt:
        (rt.workspace / "a.txt").write_text("alpha\n")
        sid = observed.sid = await rt.new_session()
        await rt.core.sessions.load(sid)
        writes = _Writes(rt, sid)
        turn_id, updates = await rt.run_turn(sid, "work")
        return _Turn(
            turn_id=turn_id,
            kinds=[type(u.update) for u in updates],
            writes=writes.calls,
            stored=await store_rows.session_messages(store.pool, sid),
            record=await store.get_turn(sid, turn_id),
        )


async def test_a_response_of_read_only_calls_is_written_with_its_results_after_they_ran(
    store: PostgresStore, tmp_path: Path, stored_at_run: _StoredAtRun
) -> None:
    turn = await _one_step(
        store,
        tmp_path,
        stored_at_run,
        (
            ("c-read", "read", {"path": "a.txt"}),
            ("c-grep", "grep", {"pattern": "alpha"}),
            ("c-none", "no_such_tool", {}),
        ),
    )
    # while the effect-free tools ran, nothing of their response was durable …
    assert stored_at_run.seen == [set(), set()]  # read and grep (the unknown tool runs nothing)
    # … then the response and its three results were one write, the final answer another
    assert turn.writes == ["response with results", "response"]
    rows = [m for m in turn.stored if m.turn_id == turn.turn_id and m.role.value != "user"]
    assert [(m.role.value, m.provider_call_id) for m in rows] == [
        ("assistant", None),
        ("tool", "c-read"),
        ("tool", "c-grep"),
        ("tool", "c-none"),
        ("assistant", None),
    ]
    assert [m.sequence for m in rows] == list(range(rows[0].sequence, rows[0].sequence + 5))
    record = turn.record
    assert (record.tool_call_count, record.model_call_count, record.model_submission_count) == (
        3,
        2,
        2,
    )
    kinds = turn.kinds
    first_cleared = kinds.index(DraftCleared)
    started = [i for i, k in enumerate(kinds) if k is ToolCallStarted]
    finished = [i for i, k in enumerate(kinds) if k is ToolCallFinished]
    # the draft is cleared once the response is durable: after the calls started, before any
    # result is announced (each result is announced after its write, as before)
    assert len(started) == len(finished) == 3
    assert max(started) < first_cleared < min(finished)


async def test_a_response_that_may_have_an_effect_is_written_before_any_of_its_tools_runs(
    store: PostgresStore, tmp_path: Path, stored_at_run: _StoredAtRun
) -> None:
    """One effectful call (``write``) keeps the whole response write-ahead (storage.md §3):
    durable before its first tool, even an effect-free one, runs; each result its own write."""
    turn = await _one_step(
        store,
        tmp_path,
        stored_at_run,
        (
            ("c-read", "read", {"path": "a.txt"}),
            ("c-write", "write", {"path": "b.txt", "content": "beta\n"}),
        ),
    )
    assert (tmp_path / "workspace" / "b.txt").read_text() == "beta\n"
    assert stored_at_run.seen == [{"c-read", "c-write"}, {"c-read", "c-write"}]
    assert turn.writes == ["response", "result", "result", "response"]
    assert turn.kinds.index(DraftCleared) < turn.kinds.index(ToolCallStarted)


async def test_a_cancel_while_a_read_only_tool_runs_writes_the_step_whole_and_calls_no_model(
    store: PostgresStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The step a cancel ends is still one write: the response, the running call's result and
    the ``terminated`` result of the call left (session-runtime.md §4); no model call after."""
    running, release = asyncio.Event(), asyncio.Event()
    real = FinalizedToolset.call

    async def held(
        self: FinalizedToolset, name: str, input_json: str, context: ToolCallContext
    ) -> ToolResult:
        running.set()
        await release.wait()
        return await real(self, name, input_json, context)

    monkeypatch.setattr(FinalizedToolset, "call", held)
    model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=(("c-read", "read", {"path": "a.txt"}), ("c-list", "list", {}))
            ),
            ScriptedResponse(text="never asked"),
        ]
    )
    async with runtime(store, tmp_path, model) as rt:
        (rt.workspace / "a.txt").write_text("alpha\n")
        sid = await rt.new_session()
        await rt.core.sessions.load(sid)
        writes = _Writes(rt, sid)
        _, subscription = await rt.core.subscribe(sid, None)
        try:
            accepted = await rt.core.start_turn(
                sid, client_request_id="r", inputs=[TextInput(text="x")]
            )
            async with asyncio.timeout(10):
                await running.wait()
            await rt.core.cancel_turn(sid, accepted.turn_id)
            release.set()
            async with asyncio.timeout(10):
                while not isinstance((await subscription.queue.get()).update, TurnFinished):
                    pass
        finally:
            subscription.close()
        view = await rt.core.turn_view(sid, accepted.turn_id)
        stored = await store_rows.session_messages(store.pool, sid)
    assert view.status is TurnStatus.CANCELLED
    assert writes.calls == ["response with results"]
    assert len(model.requests) == 1
    results = [m for m in stored if m.turn_id == accepted.turn_id and m.role.value == "tool"]
    assert [m.provider_call_id for m in results] == ["c-read", "c-list"]
    assert TERMINATED_TEXT in results[1].content
