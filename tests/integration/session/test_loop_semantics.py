"""Loop semantics and the streaming draft (session-runtime.md §4–§6, §13)."""

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
from openwork_core.session.input import TextInput
from openwork_core.session.outcome import Cancelled
from openwork_core.storage import PostgresStore
from openwork_core.storage.records import TurnStatus
from tests.support import store_rows
from tests.support.runtime import Runtime, runtime


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


async def _outcome(rt: Runtime, sid: str, text: str) -> tuple[str, TurnStatus, str | None]:
    turn_id, _ = await rt.run_turn(sid, text)
    view = await rt.core.turn_view(sid, turn_id)
    return turn_id, view.status, view.error_code


async def test_multiple_tool_results_keep_provider_order_in_the_next_request(
    store: PostgresStore, tmp_path: Path
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
    async with runtime(store, tmp_path, model) as rt:
        (rt.workspace / "a.txt").write_text("A\n")
        (rt.workspace / "b.txt").write_text("B\n")
        sid = await rt.new_session()
        _, status, _ = await _outcome(rt, sid, "read both")
        assert status is TurnStatus.COMPLETED
    assert [r.id for r in _results(model.requests[1])] == ["c-b", "c-a", "c-l"]
    model.assert_invariants(check_prefix=True)


async def test_tool_errors_unknown_tools_and_invalid_arguments_go_back_to_the_model(
    store: PostgresStore, tmp_path: Path
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
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        _, status, _ = await _outcome(rt, sid, "try things")
        assert status is TurnStatus.COMPLETED
    missing, unknown, invalid, not_object = _results(model.requests[1])
    assert missing.state is ToolResultState.ERROR
    assert (unknown.state, _text(unknown)) == (ToolResultState.ERROR, "tool not found: teleport")
    assert invalid.state is ToolResultState.ERROR
    assert _text(invalid).startswith("invalid tool input:")
    assert _text(not_object).startswith("invalid tool input:")


async def test_three_identical_consecutive_calls_end_the_turn_as_a_doom_loop(
    store: PostgresStore, tmp_path: Path
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
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        turn_id, status, code = await _outcome(rt, sid, "loop")
        assert (status, code) == (TurnStatus.FAILED, "doom_loop")
        stored = await store_rows.session_messages(store.pool, sid)
    from openwork_core.storage.codec import decode_message

    results = [b for m in stored for b in decode_message(m).tool_results]
    assert [(r.id, _text(r)) for r in results[-2:]] == [
        ("c3", "doom loop detected for tool 'list'"),
        ("c4", "tool was not executed because the turn already terminated"),
    ]
    assert results[-1].state is ToolResultState.INTERRUPTED
    assert turn_id


async def test_reaching_max_model_calls_fails_the_turn(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§4 step 4 (untested in the original): the default agent stops after 20 model calls."""
    model = ScriptedModel(
        [ScriptedResponse(tool_calls=((f"c{i}", "list", {"offset": i}),)) for i in range(20)]
    )
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        _, status, code = await _outcome(rt, sid, "forever")
        assert (status, code) == (TurnStatus.FAILED, "max_model_calls")
    assert len(model.requests) == 20


async def test_a_broken_stream_discards_the_draft_and_fails_model_error(
    store: PostgresStore, tmp_path: Path
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
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        turn_id, updates = await rt.run_turn(sid, "go")
        view = await rt.core.turn_view(sid, turn_id)
        assert (view.status, view.error_code) == (TurnStatus.FAILED, "model_error")
        kinds = [u.update.type for u in updates]
        assert "text_delta" in kinds
        assert "draft_cleared" in kinds
        stored = await store_rows.session_messages(store.pool, sid)
        assert [m.role for m in stored if m.role is Role.ASSISTANT] == []
        assert not (rt.workspace / "never.txt").exists()
        snapshot = await rt.core.snapshot(sid)
        assert snapshot.runtime.state == "terminal"


async def test_no_completion_or_two_completions_is_a_model_protocol_error(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§6: no completed response, or two, fails model_protocol_error and writes nothing."""
    model = ScriptedModel(
        [
            ScriptedResponse(text="a", ending="no_completion"),
            ScriptedResponse(text="b", ending="two_completions"),
        ]
    )
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        for text in ("first", "second"):
            _, status, code = await _outcome(rt, sid, text)
            assert (status, code) == (TurnStatus.FAILED, "model_protocol_error")
        stored = await store_rows.session_messages(store.pool, sid)
        assert not any(m.role is Role.ASSISTANT for m in stored)


async def test_cancel_while_waiting_for_the_model_cancels_the_turn(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§2 CancelTurn while the model has not answered (the original tested only the tool case)."""
    started = asyncio.Event()

    async def never_answers(_request: ModelRequest) -> AsyncIterator[ModelEvent]:
        started.set()
        await asyncio.Event().wait()
        for event in scripted_events(ScriptedResponse(text="never")):
            yield event

    model = ScriptedModel([never_answers])
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        _, subscription = await rt.core.subscribe(sid, None)
        accepted = await rt.core.start_turn(
            sid, client_request_id="r", inputs=[TextInput(text="x")]
        )
        async with asyncio.timeout(10):
            await started.wait()
        draft_snapshot = await rt.core.snapshot(sid)
        assert draft_snapshot.runtime.state == "running"
        await rt.core.cancel_turn(sid, accepted.turn_id)
        async with asyncio.timeout(10):
            while True:
                envelope = await subscription.queue.get()
                if envelope.update.type == "turn_finished":
                    assert envelope.update.outcome == Cancelled()  # type: ignore[union-attr]
                    break
        subscription.close()
        view = await rt.core.turn_view(sid, accepted.turn_id)
        assert view.status is TurnStatus.CANCELLED


async def test_turn_counters_and_usage_are_recorded(store: PostgresStore, tmp_path: Path) -> None:
    """storage.md §3: model_call_count, model_submission_count, tool_call_count, tokens."""
    from openwork_core.usage import TokenUsage

    model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=(("c1", "list", {}), ("c2", "list", {"path": "."})),
                usage=TokenUsage(input_tokens=100, output_tokens=10),
            ),
            ScriptedResponse(text="done", usage=TokenUsage(input_tokens=150, output_tokens=5)),
        ]
    )
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        turn_id, _, _ = await _outcome(rt, sid, "count")
    row = await store.get_turn(sid, turn_id)
    assert (row.model_call_count, row.model_submission_count, row.tool_call_count) == (2, 2, 2)
    assert (row.input_tokens, row.output_tokens) == (250, 15)
    assert row.ended_at is not None


async def test_a_response_with_duplicate_tool_call_ids_is_a_protocol_error_and_is_not_stored(
    store: PostgresStore, tmp_path: Path
) -> None:
    """context-window.md §4.1: the same Tool Call id cannot occur twice; such a response is
    refused before it is written, so the session stays loadable."""
    model = ScriptedModel(
        [ScriptedResponse(tool_calls=(("dup", "list", {}), ("dup", "list", {"path": "."})))]
    )
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        _, status, code = await _outcome(rt, sid, "go")
        assert (status, code) == (TurnStatus.FAILED, "model_protocol_error")
        assert not any(
            m.role is Role.ASSISTANT for m in await store_rows.session_messages(store.pool, sid)
        )


async def test_a_chat_state_that_stops_mid_turn_fails_the_turn_chat_state_error(
    store: PostgresStore, tmp_path: Path
) -> None:
    """session-runtime.md §3: chat_state_error when the Conversation cannot take the response."""
    box: list[Runtime] = []
    sessions: list[str] = []

    async def stop_the_chat_state_then_answer(_request: ModelRequest) -> AsyncIterator[ModelEvent]:
        await box[0].core.sessions.load(sessions[0])
        await box[0].services[sessions[0]].chat.stop()
        for event in scripted_events(ScriptedResponse(text="late")):
            yield event

    model = ScriptedModel([stop_the_chat_state_then_answer])
    async with runtime(store, tmp_path, model) as rt:
        box.append(rt)
        sid = await rt.new_session()
        sessions.append(sid)
        _, status, code = await _outcome(rt, sid, "go")
        assert (status, code) == (TurnStatus.FAILED, "chat_state_error")


async def test_a_workspace_that_disappeared_fails_user_project_context_error(
    store: PostgresStore, tmp_path: Path
) -> None:
    """context-window.md §3: a failing source fails the turn before any model call."""
    model = ScriptedModel()
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        rt.workspace.rename(tmp_path / "moved-away")
        _, status, code = await _outcome(rt, sid, "go")
        assert (status, code) == (TurnStatus.FAILED, "user_project_context_error")
    assert model.requests == []
