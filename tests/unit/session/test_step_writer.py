"""The step writer's state diagram (issue 23 point 1; ``session/runner/step_writer.py``), run by
the real turn runner on the in-memory storage: which writes a model step makes, in which order,
and which counter each carries (storage.md §3; session-runtime.md §4, §5 step 9)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import user_text
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.session.input import PreparedTurnInput, input_message
from openwork_core.session.runner.context import TurnSpec
from openwork_core.session.storage import StepWrite, TurnStatus
from openwork_core.session.updates import TurnFinished
from openwork_tools.context import ToolCallContext
from openwork_tools.registry import FinalizedToolset
from openwork_tools.results import ToolResult
from tests.support.memory_session import MemorySession, memory_session

Write = tuple[str, int, int | None]
"""(what, messages, submission counter): ``response`` (its results with it), ``results``,
``counter`` (a write of the counter alone); World State rows are left out."""


class _Writes:
    def __init__(self, session: MemorySession) -> None:
        self.steps: list[Write] = []
        storage = session.storage
        real = storage.append

        async def append(turn_id: str, step: StepWrite) -> Any:
            if step.response is not None:
                self.steps.append(("response", len(step.messages), step.submission))
            elif not step.messages:
                self.steps.append(("counter", 0, step.submission))
            elif any(m.kind is not MessageKind.WORLD_STATE for m in step.messages):
                self.steps.append(("results", len(step.messages), step.submission))
            return await real(turn_id, step)

        storage.append = append  # type: ignore[method-assign]


def _spec(session: MemorySession, turn_id: str) -> TurnSpec:
    return TurnSpec(
        session_id=session.storage.session_id,
        turn_id=turn_id,
        client_request_id=f"req-{turn_id}",
        input=PreparedTurnInput(messages=(input_message(user_text("work")),)),
        model=session.model,
    )


async def _finished(
    session: MemorySession, turn_id: str, during: Callable[[], Awaitable[None]] | None = None
) -> None:
    """Run a turn to its ``turn_finished``; ``during`` runs once it was accepted."""
    _, subscription = await session.handle.subscribe(None)
    try:
        await session.handle.start_turn(_spec(session, turn_id))
        if during is not None:
            await during()
        async with asyncio.timeout(20):
            while not isinstance((await subscription.queue.get()).update, TurnFinished):
                pass
    finally:
        subscription.close()


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "a.txt").write_text("alpha\n")
    return workspace


async def test_a_step_of_effect_free_calls_is_one_write_with_the_next_calls_counter(
    tmp_path: Path,
) -> None:
    """DEFERRED → IDLE on the last result: the response, both results and the next model
    call's counter in one write; the next submission writes no counter of its own."""
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=(("c1", "read", {"path": "a.txt"}), ("c2", "list", {}))),
            ScriptedResponse(text="done"),
        ]
    )
    async with memory_session(model, _workspace(tmp_path)) as session:
        writes = _Writes(session)
        await _finished(session, "turn-1")
        turn = session.storage.turns["turn-1"]
    assert writes.steps == [("counter", 0, 1), ("response", 3, 2), ("response", 1, None)]
    assert (turn.status, turn.model_call_count, turn.model_submission_count) == (
        TurnStatus.COMPLETED,
        2,
        2,
    )
    assert turn.tool_call_count == 2


async def test_a_step_that_may_have_an_effect_writes_its_response_first_and_its_last_result_counts(
    tmp_path: Path,
) -> None:
    """IDLE → AHEAD: the response before any tool runs, then each result on its own, the last
    with the next model call's counter."""
    model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=(
                    ("c1", "read", {"path": "a.txt"}),
                    ("c2", "write", {"path": "b.txt", "content": "beta\n"}),
                )
            ),
            ScriptedResponse(text="done"),
        ]
    )
    workspace = _workspace(tmp_path)
    async with memory_session(model, workspace) as session:
        writes = _Writes(session)
        await _finished(session, "turn-1")
        turn = session.storage.turns["turn-1"]
    assert (workspace / "b.txt").read_text() == "beta\n"
    assert writes.steps == [
        ("counter", 0, 1),
        ("response", 1, None),
        ("results", 1, None),
        ("results", 1, 2),
        ("response", 1, None),
    ]
    assert (turn.model_call_count, turn.model_submission_count, turn.tool_call_count) == (2, 2, 2)


async def test_a_counter_written_ahead_for_a_call_never_submitted_is_taken_back_at_the_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cancel while the step's read-only tool runs: the step is still one write (its last
    result counts call 2 ahead), call 2 never goes out, and the turn's closing writes the
    counts the writer kept (1 call, 1 submission)."""
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
            ScriptedResponse(tool_calls=(("c1", "read", {"path": "a.txt"}),)),
            ScriptedResponse(text="never asked"),
        ]
    )
    async with memory_session(model, _workspace(tmp_path)) as session:
        writes = _Writes(session)

        async def cancel_while_it_runs() -> None:
            async with asyncio.timeout(10):
                await running.wait()
            await session.handle.cancel_turn("turn-1")  # the actor has taken the cancel
            release.set()

        await _finished(session, "turn-1", cancel_while_it_runs)
        turn = session.storage.turns["turn-1"]
    assert writes.steps == [("counter", 0, 1), ("response", 2, 2)]
    assert len(model.requests) == 1
    assert (turn.status, turn.model_call_count, turn.model_submission_count) == (
        TurnStatus.CANCELLED,
        1,
        1,
    )
