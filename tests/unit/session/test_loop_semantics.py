"""Loop semantics and the streaming draft (session-runtime.md §4–§6, §13), run by the real
session actor and turn runner on the in-memory storage (issue 23 point 6: runner behaviour
needs no PostgreSQL)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from openwork_chat_state.messages import Role, TextBlock, ToolResultBlock, ToolResultState
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse, scripted_events
from openwork_core.models.port import (
    DeliveryState,
    ErrorPhase,
    ModelError,
    ModelErrorKind,
    ModelEvent,
    ModelRequest,
)
from openwork_core.session.outcome import Cancelled
from openwork_core.session.runner.model_step import MAX_CALL_ID_CHARS
from openwork_core.storage.codec import decode_message
from openwork_core.storage.records import TurnStatus
from openwork_core.usage import TokenUsage
from tests.support.memory_session import MemorySession, memory_session


def _results(request: ModelRequest) -> list[ToolResultBlock]:
    return [
        b
        for m in request.messages
        if m.role is Role.TOOL
        for b in m.content
        if isinstance(b, ToolResultBlock)
    ]


def _text(result: ToolResultBlock) -> str:
    return "".join(b.text for b in result.output if isinstance(b, TextBlock))


async def _outcome(session: MemorySession, text: str) -> tuple[str, TurnStatus, str | None]:
    turn_id, _ = await session.run_turn(text)
    turn = session.storage.turns[turn_id]
    return turn_id, turn.status, turn.error_code


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return workspace


async def test_multiple_tool_results_keep_provider_order_in_the_next_request(
    tmp_path: Path,
) -> None:
    """§5: calls of one response run serially; results follow in provider order."""
    model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=(
                    ("c-b", "read", {"path": "b.txt"}),
                    ("c-a", "read", {"path": "a.txt"}),
                    ("c-l", "list", {}),
                )
            ),
            ScriptedResponse(text="ok"),
        ]
    )
    async with memory_session(model, _workspace(tmp_path)) as session:
        (session.workspace / "a.txt").write_text("A\n")
        (session.workspace / "b.txt").write_text("B\n")
        _, status, _ = await _outcome(session, "read both")
        assert status is TurnStatus.COMPLETED
    assert [r.id for r in _results(model.requests[1])] == ["c-b", "c-a", "c-l"]
    model.assert_invariants(check_prefix=True)


async def test_tool_errors_unknown_tools_and_invalid_arguments_go_back_to_the_model(
    tmp_path: Path,
) -> None:
    """§4 invariant 4, §5: errors are results; the loop continues."""
    model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=(
                    ("c1", "read", {"path": "missing.txt"}),
                    ("c2", "teleport", {}),
                    ("c3", "read", {"limit": "many"}),
                    ("c4", "read", "[1, 2]"),
                )
            ),
            ScriptedResponse(text="recovered"),
        ]
    )
    async with memory_session(model, _workspace(tmp_path)) as session:
        _, status, _ = await _outcome(session, "try things")
        assert status is TurnStatus.COMPLETED
    missing, unknown, invalid, not_object = _results(model.requests[1])
    assert missing.state is ToolResultState.ERROR
    assert (unknown.state, _text(unknown)) == (ToolResultState.ERROR, "tool not found: teleport")
    assert invalid.state is ToolResultState.ERROR
    assert _text(invalid).startswith("invalid tool input:")
    assert _text(not_object).startswith("invalid tool input:")


async def test_three_identical_consecutive_calls_end_the_turn_as_a_doom_loop(
    tmp_path: Path,
) -> None:
    """§4: the third identical call is not run; the turn fails doom_loop; later calls of that
    response get the fixed cancelled result (untested in the original)."""
    same = ("list", {"path": "."})
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=(("c1", *same),)),
            ScriptedResponse(tool_calls=(("c2", *same),)),
            ScriptedResponse(tool_calls=(("c3", *same), ("c4", "read", {"path": "x"}))),
        ]
    )
    async with memory_session(model, _workspace(tmp_path)) as session:
        turn_id, status, code = await _outcome(session, "loop")
        assert (status, code) == (TurnStatus.FAILED, "doom_loop")
        stored = session.storage.messages
    results = [b for m in stored for b in decode_message(m).tool_results]
    assert [(r.id, _text(r)) for r in results[-2:]] == [
        ("c3", "doom loop detected for tool 'list'"),
        ("c4", "tool was not executed because the turn already terminated"),
    ]
    assert results[-1].state is ToolResultState.INTERRUPTED
    assert turn_id


async def test_reaching_max_model_calls_fails_the_turn(
    tmp_path: Path,
) -> None:
    """§4 step 4 (untested in the original): the default agent stops after 20 model calls."""
    model = ScriptedModel(
        [ScriptedResponse(tool_calls=((f"c{i}", "list", {"offset": i}),)) for i in range(20)]
    )
    async with memory_session(model, _workspace(tmp_path)) as session:
        _, status, code = await _outcome(session, "forever")
        assert (status, code) == (TurnStatus.FAILED, "max_model_calls")
    assert len(model.requests) == 20


async def test_a_broken_stream_discards_the_draft_and_fails_model_error(
    tmp_path: Path,
) -> None:
    """§6: deltas went out live, nothing of the draft is written; an incomplete tool call never runs."""
    broken = ModelError(
        ModelErrorKind.NETWORK,
        "provider network error: connection reset",
        phase=ErrorPhase.STREAM_DECODE,
        delivery=DeliveryState.SEMANTIC_OUTPUT_EMITTED,
    )
    model = ScriptedModel(
        [
            ScriptedResponse(
                text="partial answer",
                tool_calls=(("c1", "write", {"path": "never.txt", "content": "x"}),),
                error=broken,
            )
        ]
    )
    async with memory_session(model, _workspace(tmp_path)) as session:
        turn_id, updates = await session.run_turn("go")
        turn = session.storage.turns[turn_id]
        assert (turn.status, turn.error_code) == (TurnStatus.FAILED, "model_error")
        kinds = [u.update.type for u in updates]
        assert "text_delta" in kinds
        assert "draft_cleared" in kinds
        stored = session.storage.messages
        assert [m.role for m in stored if m.role is Role.ASSISTANT] == []
        assert not (session.workspace / "never.txt").exists()
        snapshot = await session.handle.snapshot()
        assert snapshot.runtime.state == "terminal"


async def test_no_completion_or_two_completions_is_a_model_protocol_error(
    tmp_path: Path,
) -> None:
    """§6: no completed response, or two, fails model_protocol_error and writes nothing."""
    model = ScriptedModel(
        [
            ScriptedResponse(text="a", ending="no_completion"),
            ScriptedResponse(text="b", ending="two_completions"),
        ]
    )
    async with memory_session(model, _workspace(tmp_path)) as session:
        for text in ("first", "second"):
            _, status, code = await _outcome(session, text)
            assert (status, code) == (TurnStatus.FAILED, "model_protocol_error")
        stored = session.storage.messages
        assert not any(m.role is Role.ASSISTANT for m in stored)


async def test_cancel_while_waiting_for_the_model_cancels_the_turn(
    tmp_path: Path,
) -> None:
    """§2 CancelTurn while the model has not answered (the original tested only the tool case)."""
    started = asyncio.Event()

    async def never_answers(_request: ModelRequest) -> AsyncIterator[ModelEvent]:
        started.set()
        await asyncio.Event().wait()
        for event in scripted_events(ScriptedResponse(text="never")):
            yield event

    model = ScriptedModel([never_answers])
    async with memory_session(model, _workspace(tmp_path)) as session:
        _, subscription = await session.handle.subscribe(None)
        accepted = await session.handle.start_turn(session.spec("turn-1", "x"))
        async with asyncio.timeout(10):
            await started.wait()
        draft_snapshot = await session.handle.snapshot()
        assert draft_snapshot.runtime.state == "running"
        await session.handle.cancel_turn(accepted.turn_id)
        async with asyncio.timeout(10):
            while True:
                envelope = await subscription.queue.get()
                if envelope.update.type == "turn_finished":
                    assert envelope.update.outcome == Cancelled()  # type: ignore[union-attr]
                    break
        subscription.close()
        assert session.storage.turns[accepted.turn_id].status is TurnStatus.CANCELLED


async def test_turn_counters_and_usage_are_recorded(tmp_path: Path) -> None:
    """storage.md §3: model_call_count, model_submission_count, tool_call_count, tokens."""
    model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=(("c1", "list", {}), ("c2", "list", {"path": "."})),
                usage=TokenUsage(input_tokens=100, output_tokens=10),
            ),
            ScriptedResponse(text="done", usage=TokenUsage(input_tokens=150, output_tokens=5)),
        ]
    )
    async with memory_session(model, _workspace(tmp_path)) as session:
        turn_id, _, _ = await _outcome(session, "count")
        row = session.storage.turns[turn_id].record(session.storage.session_id)
    assert (row.model_call_count, row.model_submission_count, row.tool_call_count) == (2, 2, 2)
    assert (row.input_tokens, row.output_tokens) == (250, 15)
    assert row.ended_at is not None


async def test_a_response_with_duplicate_tool_call_ids_is_a_protocol_error_and_is_not_stored(
    tmp_path: Path,
) -> None:
    """context-window.md §4.1: the same Tool Call id cannot occur twice; such a response is
    refused before it is written, so the session stays loadable."""
    model = ScriptedModel(
        [ScriptedResponse(tool_calls=(("dup", "list", {}), ("dup", "list", {"path": "."})))]
    )
    async with memory_session(model, _workspace(tmp_path)) as session:
        _, status, code = await _outcome(session, "go")
        assert (status, code) == (TurnStatus.FAILED, "model_protocol_error")
        assert not any(m.role is Role.ASSISTANT for m in session.storage.messages)


async def test_a_tool_call_id_storage_cannot_hold_is_a_protocol_error_and_is_not_stored(
    tmp_path: Path,
) -> None:
    """context-window.md §4.1: a call id is the provider's token, stored as it came and indexed
    with its turn; one holding U+0000 or a lone surrogate, or longer than ``MAX_CALL_ID_CHARS``,
    is the provider's broken output (model_protocol_error), refused before anything is written.
    Before, the memory storage's actor stopped, and on PostgreSQL a 6 000-character id failed
    the turn ``persistence_error`` (past the index's 2 704 bytes), as if the database were at
    fault."""
    for n, bad in enumerate(("call\x00one", "call\ud800", "c" * (MAX_CALL_ID_CHARS + 1))):
        model = ScriptedModel([ScriptedResponse(tool_calls=((bad, "list", {}),))])
        (tmp_path / str(n)).mkdir()
        async with memory_session(model, _workspace(tmp_path / str(n))) as session:
            _, status, code = await _outcome(session, "go")
            assert (status, code) == (TurnStatus.FAILED, "model_protocol_error")
            assert not any(m.role is Role.ASSISTANT for m in session.storage.messages)


async def test_a_chat_state_that_stops_mid_turn_fails_the_turn_chat_state_error(
    tmp_path: Path,
) -> None:
    """session-runtime.md §3: chat_state_error when the Conversation cannot take the response."""
    box: list[MemorySession] = []

    async def stop_the_chat_state_then_answer(_request: ModelRequest) -> AsyncIterator[ModelEvent]:
        await box[0].services.chat.stop()
        for event in scripted_events(ScriptedResponse(text="late")):
            yield event

    model = ScriptedModel([stop_the_chat_state_then_answer])
    async with memory_session(model, _workspace(tmp_path)) as session:
        box.append(session)
        _, status, code = await _outcome(session, "go")
        assert (status, code) == (TurnStatus.FAILED, "chat_state_error")


async def test_a_workspace_that_disappeared_fails_user_project_context_error(
    tmp_path: Path,
) -> None:
    """context-window.md §3: a failing source fails the turn before any model call."""
    model = ScriptedModel()
    async with memory_session(model, _workspace(tmp_path)) as session:
        session.workspace.rename(tmp_path / "moved-away")
        _, status, code = await _outcome(session, "go")
        assert (status, code) == (TurnStatus.FAILED, "user_project_context_error")
    assert model.requests == []
