"""The turn loop on real PostgreSQL with a scripted model (session-runtime.md §2, §4)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from openwork_chat_state.errors import PersistedSystemMessage
from openwork_chat_state.messages import Role, ToolCallBlock, ToolResultBlock, ToolResultState
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.session.errors import Busy
from openwork_core.session.input import TextInput
from openwork_core.session.outcome import Completed
from openwork_core.session.updates import TurnFinished, UsageBody
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import TurnStatus
from tests.support.runtime import runtime


async def test_a_turn_without_tool_calls_completes_after_one_model_call(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§4 step h: no tool call → the turn completes with this response's text."""
    model = ScriptedModel([ScriptedResponse(text="Hello there.")])
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        turn_id, updates = await rt.run_turn(sid, "hi")
        view = await rt.core.turn_view(sid, turn_id)
        assert view.status is TurnStatus.COMPLETED
        assert view.final_text == "Hello there."
        assert view.model_calls == 1
        assert updates[-1].update == TurnFinished(
            outcome=Completed("Hello there."), usage=UsageBody()
        )
        assert [e.sequence for e in updates] == sorted({e.sequence for e in updates})
    model.assert_invariants()


async def test_a_read_tool_call_then_an_answer_takes_two_model_calls_and_the_result_is_sent_back(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§4: assistant persisted before the tool runs; the next request carries call then result."""
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=(("call-1", "read", {"path": "notes.txt"}),)),
            ScriptedResponse(text="The notes say hi."),
        ]
    )
    async with runtime(store, tmp_path, model) as rt:
        (rt.workspace / "notes.txt").write_text("hi\n")
        sid = await rt.new_session()
        turn_id, _ = await rt.run_turn(sid, "what do my notes say?")
        view = await rt.core.turn_view(sid, turn_id)
        assert (view.status, view.model_calls, view.final_text) == (
            TurnStatus.COMPLETED,
            2,
            "The notes say hi.",
        )
    second = model.requests[1].messages
    assistant, tool = second[-2], second[-1]
    assert assistant.role is Role.ASSISTANT
    assert assistant.content == (
        ToolCallBlock(id="call-1", name="read", input='{"path": "notes.txt"}'),
    )
    assert tool.role is Role.TOOL
    (result,) = tool.content
    assert isinstance(result, ToolResultBlock)
    assert (result.id, result.state) == ("call-1", ToolResultState.SUCCESS)
    assert "1\thi" in result.output[0].text  # type: ignore[union-attr]
    model.assert_invariants(check_prefix=True)


async def test_the_same_client_request_id_returns_the_same_turn_and_another_request_is_busy(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§2: idempotent client_request_id; a second turn is refused with Busy, not queued."""
    release = asyncio.Event()

    async def held(_request: object):  # type: ignore[no-untyped-def]
        await release.wait()
        for event in _text_events("done"):
            yield event

    model = ScriptedModel([held])
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        first = await rt.core.start_turn(sid, client_request_id="a", inputs=[TextInput(text="x")])
        again = await rt.core.start_turn(sid, client_request_id="a", inputs=[TextInput(text="x")])
        assert again.turn_id == first.turn_id
        with pytest.raises(Busy) as busy:
            await rt.core.start_turn(sid, client_request_id="b", inputs=[TextInput(text="y")])
        assert busy.value.turn_id == first.turn_id
        await model.wait_for_requests(1, timeout=10)
        release.set()
        await _wait_terminal(rt.core, sid, first.turn_id)
        assert (await rt.core.turn_view(sid, first.turn_id)).status is TurnStatus.COMPLETED


async def test_a_persisted_system_message_refuses_to_load_the_session(
    store: PostgresStore, tmp_path: Path
) -> None:
    """context-window.md §4.1 (a gap in the original): loading a System message fails."""
    async with runtime(store, tmp_path) as rt:
        sid = await rt.new_session()
        async with store.pool.acquire() as conn:
            await conn.execute(
                """INSERT INTO messages (id, session_id, turn_id, sequence, role, content)
                   VALUES ('sys', $1, NULL, 1, 'system', '[{"type":"text","text":"x"}]')""",
                sid,
            )
        with pytest.raises(PersistedSystemMessage):
            await rt.core.sessions.load(sid)


def _text_events(text: str):  # type: ignore[no-untyped-def]
    from openwork_core.models.adapters.scripted import scripted_events

    return scripted_events(ScriptedResponse(text=text))


async def _wait_terminal(core, sid: str, turn_id: str) -> None:  # type: ignore[no-untyped-def]
    _, subscription = await core.subscribe(sid, 0)
    try:
        async with asyncio.timeout(10):
            while True:
                snapshot = await core.snapshot(sid)
                if snapshot.runtime.state == "terminal" and snapshot.runtime.turn_id == turn_id:
                    return
                await subscription.queue.get()
    finally:
        subscription.close()
