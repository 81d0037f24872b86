"""The turn runner over the in-memory session storage port (no PostgreSQL): the same facts in the
same order as on PostgreSQL (session-runtime.md §3–§4: persist, then advance), and the actor's
commands around a turn (session-runtime.md §2)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import Role, user_text
from openwork_core.context.limits import ModelContextLimits
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse, scripted_events
from openwork_core.models.capabilities import ModelCapabilities
from openwork_core.models.port import ModelEvent
from openwork_core.session.errors import ActorStopped, Busy
from openwork_core.session.input import PreparedTurnInput, input_message
from openwork_core.session.outcome import Completed
from openwork_core.session.runner.context import TurnSpec
from openwork_core.session.storage import TurnStatus
from openwork_core.session.updates import ContextUpdated, TurnFinished
from openwork_core.storage.records import ProviderModel
from tests.support.memory_session import MemorySession, memory_session


def _spec(session: MemorySession, turn_id: str, text: str) -> TurnSpec:
    return TurnSpec(
        session_id=session.storage.session_id,
        turn_id=turn_id,
        client_request_id=f"req-{turn_id}",
        input=PreparedTurnInput(messages=(input_message(user_text(text)),)),
        model=session.model,
    )


async def _run(session: MemorySession, spec: TurnSpec) -> TurnFinished:
    """Subscribe, start the turn, and wait (bounded) for its ``turn_finished``."""
    _, subscription = await session.handle.subscribe(None)
    try:
        accepted = await session.handle.start_turn(spec)
        assert accepted.turn_id == spec.turn_id
        async with asyncio.timeout(20):
            while True:
                envelope = await subscription.queue.get()
                if envelope.turn_id == spec.turn_id and isinstance(envelope.update, TurnFinished):
                    return envelope.update
    finally:
        subscription.close()


async def test_a_read_then_an_answer_stores_every_fact_in_order_without_postgres(
    tmp_path: Path,
) -> None:
    """§4: user input, World State, assistant call, tool result, final answer — sequences 1…n,
    the turn completed, the Chat State items carry exactly the stored origins."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("hi\n")
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=(("call-1", "read", {"path": "notes.txt"}),)),
            ScriptedResponse(text="The notes say hi."),
        ]
    )
    async with memory_session(model, workspace) as session:
        finished = await _run(session, _spec(session, "turn-1", "read my notes"))
        assert finished.outcome == Completed("The notes say hi.")
        stored = session.storage.messages
        assert [m.sequence for m in stored] == list(range(1, len(stored) + 1))
        roles = [(m.role, m.kind) for m in stored]
        assert roles[0] == (Role.USER, MessageKind.NORMAL)
        assert (Role.USER, MessageKind.WORLD_STATE) in roles
        assert [r for r, _ in roles[-3:]] == [Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]
        assert session.storage.turns["turn-1"].status is TurnStatus.COMPLETED
        view = await session.services.chat.context_view()
        origins = [(i.origin.message_id, i.origin.sequence) for i in view.items]  # type: ignore[union-attr]
        assert origins == [(m.id, m.sequence) for m in stored]
    model.assert_invariants()


async def test_a_second_turn_while_one_runs_is_busy_and_a_stopped_actor_answers_actor_stopped(
    tmp_path: Path,
) -> None:
    """§2: one active turn per session; a stopped actor answers ``ActorStopped``; the turn a
    stop interrupts ends ``cancelled``."""
    release = asyncio.Event()

    async def held(_request: object):  # type: ignore[no-untyped-def]
        await release.wait()
        yield  # pragma: no cover - never reached

    model = ScriptedModel([held])
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    async with memory_session(model, workspace) as session:
        await session.handle.start_turn(_spec(session, "turn-1", "first"))
        await model.wait_for_requests(1, timeout=10)
        with pytest.raises(Busy) as busy:
            await session.handle.start_turn(_spec(session, "turn-2", "second"))
        assert busy.value.turn_id == "turn-1"
        await session.handle.shutdown()
        assert session.storage.turns["turn-1"].status is TurnStatus.CANCELLED
        with pytest.raises(ActorStopped):
            await session.handle.snapshot()


async def test_a_model_switch_is_taken_at_the_running_turns_next_model_call(
    tmp_path: Path,
) -> None:
    """Issue 26 point 4 ("effective from the next model call"): a switch handed to the actor
    while the turn's first call streams leaves that call alone; the next call of the same turn
    goes to the new model's port with its name, after the tool result, and its budget's
    percentage is against the new model's compaction line."""
    release = asyncio.Event()
    listing = ScriptedResponse(tool_calls=(("call-1", "list", {"path": "."}),))

    async def held(_request: object) -> AsyncIterator[ModelEvent]:
        await release.wait()
        for event in scripted_events(listing):
            yield event

    first = ScriptedModel([held])
    second = ScriptedModel([ScriptedResponse(text="switched")])
    capabilities = ModelCapabilities(context_window_tokens=32_768, max_output_tokens=4_096)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    async with memory_session(first, workspace) as session:
        other = dataclasses.replace(
            session.model,
            model=ProviderModel(name="other-model", context_window=32_768, max_output_tokens=4_096),
            capabilities=capabilities,
            port=second,
        )
        _, subscription = await session.handle.subscribe(None)
        try:
            await session.handle.start_turn(_spec(session, "turn-1", "look around"))
            await first.wait_for_requests(1, timeout=10)
            await session.handle.switch_model(other)
            release.set()
            budgets: list[ContextUpdated] = []
            async with asyncio.timeout(20):
                while not isinstance(
                    (envelope := await subscription.queue.get()).update, TurnFinished
                ):
                    if isinstance(envelope.update, ContextUpdated):
                        budgets.append(envelope.update)
        finally:
            subscription.close()
        assert envelope.update.outcome == Completed("switched")
    assert [r.model for r in (*first.requests, *second.requests)] == [
        "scripted-model",
        "other-model",
    ]
    assert second.requests[0].messages[-1].role is Role.TOOL
    lines = [ModelContextLimits.from_capabilities(m.capabilities) for m in (session.model, other)]
    assert lines[0].compaction_threshold != lines[1].compaction_threshold
    for budget, limits in zip(budgets, lines, strict=True):
        used = budget.estimated_input_tokens + budget.reserved_output_tokens
        assert budget.auto_compact_percent == pytest.approx(
            100.0 * used / limits.compaction_threshold
        )
