"""The session storage port (storage.md §2–§3): the PostgreSQL and the in-memory implementations
keep the same contract — per-session gapless sequences, a write answers the ``RealOrigin`` it
created, deterministic ids are idempotent, a duplicate agent message is dropped, the turn's
terminal state and counters, and checkpoint checks (compaction.md §6)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from openwork_chat_state.item import MessageKind, RealOrigin
from openwork_chat_state.messages import (
    Message,
    Role,
    TextBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
    user_text,
)
from openwork_core.plan.tool import read_update_plan
from openwork_core.session.storage import (
    OutgoingMessage,
    SessionStorage,
    StepWrite,
    TurnClosing,
    TurnOpening,
    TurnStatus,
)
from openwork_core.storage.memory import InMemorySessionStorage
from openwork_core.storage.postgres.compactions import (
    CheckpointCheckFailed,
    CompactionKind,
    NewCheckpoint,
)
from openwork_core.storage.postgres.session_storage import PostgresSessionStorage
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.usage_records import (
    CacheMiss,
    CacheMissCause,
    ModelCallRecord,
    SessionUsageTotals,
)
from openwork_core.usage import TokenUsage
from openwork_tools.modes import SandboxMode

SID = "ses_port"


@pytest.fixture(params=["postgres", "memory"])
async def storage(
    request: pytest.FixtureRequest, store: PostgresStore
) -> AsyncIterator[SessionStorage]:
    if request.param == "memory":
        yield InMemorySessionStorage(SID)
        return
    await store.create_session(
        session_id=SID,
        working_directory="/tmp",
        agent="default",
        provider_id=None,
        model_name=None,
        sandbox_mode=SandboxMode.AUTO,
    )
    yield PostgresSessionStorage(store.pool, SID)


def _opening(turn_id: str) -> TurnOpening:
    return TurnOpening(
        turn_id=turn_id,
        client_request_id=f"req-{turn_id}",
        provider_id="p",
        model_name="m",
        app_version="test",
    )


def _user(message_id: str, text: str) -> OutgoingMessage:
    return OutgoingMessage(id=message_id, message=user_text(text))


def _messages(*messages: OutgoingMessage) -> StepWrite:
    return StepWrite(messages=messages)


async def test_writes_answer_gapless_origins_in_order(storage: SessionStorage) -> None:
    """storage.md §2: per-session sequences 1, 2, 3 … in write order; the origin names the row."""
    first = await storage.start_turn(_opening("t1"), [_user("m1", "a"), _user("m2", "b")])
    more = await storage.append("t1", _messages(_user("m3", "c")))
    assistant = await _answer(storage, "m4", _call(1, input_tokens=5, output_tokens=1))
    assert [(o.message_id, o.sequence) for o in (*first, *more, *assistant)] == [
        ("m1", 1),
        ("m2", 2),
        ("m3", 3),
        ("m4", 4),
    ]


async def test_a_deterministic_id_written_twice_answers_the_first_origin(
    storage: SessionStorage,
) -> None:
    """context-window.md §3: World State ids are deterministic, so a rewrite is a no-op."""
    await storage.start_turn(_opening("t1"), [_user("m1", "a")])
    world = OutgoingMessage(id="ws-1", message=user_text("<x/>"), kind=MessageKind.WORLD_STATE)
    (once,) = await storage.append("t1", _messages(world))
    (twice,) = await storage.append("t1", _messages(world))
    assert once == twice
    (after,) = await storage.append("t1", _messages(_user("m2", "b")))
    assert after.sequence == once.sequence + 1


async def test_a_drained_agent_message_already_stored_is_dropped(storage: SessionStorage) -> None:
    """multi-agent.md §6: ``ON CONFLICT (id) DO NOTHING``; only rows written now join Chat State."""
    await storage.start_turn(_opening("t1"), [_user("m1", "a")])
    mail = OutgoingMessage(id="agent:1", message=user_text("done"), kind=MessageKind.AGENT_MESSAGE)
    (written,) = await storage.append_agent_messages("t1", [mail])
    assert written is not None and written.sequence == 2
    assert await storage.append_agent_messages("t1", [mail]) == (None,)


async def test_the_plan_and_its_tool_result_commit_together(storage: SessionStorage) -> None:
    """update-plan.md §4: the plan and the success tool result in one write."""
    await storage.start_turn(_opening("t1"), [_user("m1", "a")])
    plan = read_update_plan(
        "t1", '{"plan": [{"step": "look", "status": "in_progress"}]}', datetime.now(UTC)
    )
    assert not isinstance(plan, str)
    result = Message(
        role=Role.TOOL,
        content=(
            ToolResultBlock(
                id="call-1",
                name="update_plan",
                output=(TextBlock(text="Plan updated"),),
                state=ToolResultState.SUCCESS,
            ),
        ),
    )
    (origin,) = await storage.append(
        "t1", StepWrite(messages=(OutgoingMessage(id="m2", message=result),), plan=plan)
    )
    assert (origin.message_id, origin.sequence) == ("m2", 2)


async def test_idempotency_and_the_terminal_state_are_read_back(storage: SessionStorage) -> None:
    """session-runtime.md §2: a client request id names its turn; a turn ends once."""
    await storage.start_turn(_opening("t1"), [_user("m1", "a")])
    await storage.append("t1", StepWrite(submission=1))
    assert await storage.turn_for_client_request("req-t1") == "t1"
    assert await storage.turn_for_client_request("req-other") is None
    await storage.finish_turn("t1", TurnClosing(status=TurnStatus.COMPLETED))
    await storage.set_sandbox_mode(SandboxMode.ACCEPT_EDITS)


async def test_a_threshold_checkpoint_needs_its_running_trigger_turn(
    storage: SessionStorage,
) -> None:
    """compaction.md §6: the checks hold in both implementations; nothing is written on refusal."""
    (user,) = await storage.start_turn(_opening("t1"), [_user("m1", "a")])
    new = NewCheckpoint(
        id="cmp-1",
        session_id=SID,
        kind=CompactionKind.THRESHOLD,
        source_message_count=1,
        last_user_message_id=user.message_id,
        last_user_message_sequence=user.sequence,
        resolved_model_name="m",
        summary="<conversation_summary/>",
        runtime_state="{}",
        runtime_reminder="<system_reminder/>",
        trigger_turn_id="not-running",
    )
    with pytest.raises(CheckpointCheckFailed):
        await storage.compactions.insert_checkpoint(new)
    assert await storage.compactions.latest_checkpoint(SID) is None
    record = await storage.compactions.insert_checkpoint(
        dataclasses.replace(new, trigger_turn_id="t1")
    )
    assert (record.through_message_sequence, record.sequence) == (1, 1)
    projection = await storage.compactions.load_projection(SID)
    assert projection.checkpoint == record and projection.raw == ()
    assert projection.replayed is not None and projection.replayed.id == "m1"


def _call(model_call: int, submission: int = 1, **usage: int) -> ModelCallRecord:
    return ModelCallRecord(
        model_call=model_call,
        submission=submission,
        provider_id="p",
        model_name="m",
        usage=TokenUsage(**usage),
        estimated_input_tokens=400,
        input_truncation_suspected=model_call == 2,
        stable_prefix_hash="abc",
        request_bytes=1600,
        shared_prefix_bytes=None if model_call == 1 else 1500,
        cache_miss=None
        if model_call == 1
        else CacheMiss(cause=CacheMissCause.PREFIX_CHANGED, item=3),
        idle_seconds=None if model_call == 1 else 2.5,
    )


async def _answer(
    storage: SessionStorage, message_id: str, call: ModelCallRecord
) -> tuple[RealOrigin, ...]:
    response = OutgoingMessage(id=message_id, message=Message(role=Role.ASSISTANT, content=()))
    return await storage.append("t1", StepWrite(messages=(response,), response=call))


async def test_each_submission_is_stored_with_its_assistant_message(
    storage: SessionStorage,
) -> None:
    """Issue 14 points 5 and 9 (migration 0008): a submission's usage and cache diagnostics are
    written with its assistant message and read back as written; the newest is the last call."""
    await storage.start_turn(_opening("t1"), [_user("m1", "a")])
    assert await storage.last_model_call() is None
    assert await storage.usage_totals() == SessionUsageTotals()
    first = _call(1, input_tokens=1000, cached_input_tokens=0, output_tokens=5)
    second = _call(
        2,
        input_tokens=1200,
        cached_input_tokens=900,
        cache_write_tokens=300,
        output_tokens=7,
        reasoning_tokens=2,
    )
    await _answer(storage, "m2", first)
    await _answer(storage, "m3", second)
    last = await storage.last_model_call()
    assert last is not None
    assert (last.turn_id, last.message_id, last.call) == ("t1", "m3", second)
    assert [c.call for c in await storage.turn_model_calls("t1")] == [first, second]
    totals = await storage.usage_totals()
    assert totals == SessionUsageTotals(
        model_calls=2,
        input_tokens=2200,
        cached_input_tokens=900,
        cache_write_tokens=300,
        output_tokens=12,
        reasoning_tokens=2,
        input_truncation_suspected_calls=1,
        cache_misses=1,
    )
    assert totals.cache_hit_ratio == round(900 / 2200, 4)


async def test_a_submission_is_recorded_once(storage: SessionStorage) -> None:
    """The same (turn, model call, submission) written again keeps the first row."""
    await storage.start_turn(_opening("t1"), [_user("m1", "a")])
    await _answer(storage, "m2", _call(1, input_tokens=10))
    await _answer(storage, "m3", _call(1, input_tokens=99))
    calls = await storage.turn_model_calls("t1")
    assert [(c.message_id, c.call.usage.input_tokens) for c in calls] == [("m2", 10)]


def _read_call(call_id: str) -> ToolCallBlock:
    return ToolCallBlock(
        id=call_id, name="read", input='{"path": "a.txt"}', state=ToolCallState.SUBMITTED
    )


def _read_result(call_id: str) -> Message:
    block = ToolResultBlock(
        id=call_id, name="read", output=(TextBlock(text="a"),), state=ToolResultState.SUCCESS
    )
    return Message(role=Role.TOOL, content=(block,))


async def test_a_deferred_step_writes_the_response_then_its_results_in_order(
    storage: SessionStorage,
) -> None:
    """docs/performance.md "One transaction per steady call": the response, its results and
    its submission's usage row in one write; the origins are the response's, then the results'."""
    await storage.start_turn(_opening("t1"), [_user("m1", "a")])
    await storage.append("t1", StepWrite(submission=1))
    response = Message(role=Role.ASSISTANT, content=(_read_call("c1"), _read_call("c2")))
    call = _call(1, input_tokens=10, output_tokens=2)
    origins = await storage.append(
        "t1",
        StepWrite(
            messages=(
                OutgoingMessage(id="m2", message=response),
                OutgoingMessage(id="m3", message=_read_result("c1")),
                OutgoingMessage(id="m4", message=_read_result("c2")),
            ),
            response=call,
            submission=2,
        ),
    )
    assert [(o.message_id, o.sequence) for o in origins] == [("m2", 2), ("m3", 3), ("m4", 4)]
    (recorded,) = await storage.turn_model_calls("t1")
    assert (recorded.message_id, recorded.call) == ("m2", call)
    (after,) = await storage.append("t1", _messages(_user("m5", "b")))
    assert after.sequence == 5
