"""turn_plans on real PostgreSQL (update-plan.md §4 step 7, §5), through the product's own path:
the runner writes a plan with ``PostgresSessionStorage.append(turn_id, StepWrite(plan=…))`` and
``GET /v1/sessions/{sid}/plan`` reads it back with ``history.fetch_latest_plan`` (issue 23
point 4: the tests run the code the product runs)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from openwork_chat_state.messages import (
    Message,
    Role,
    TextBlock,
    ToolResultBlock,
    ToolResultState,
    user_text,
)
from openwork_core.plan.model import TurnPlan, steps_from_json
from openwork_core.plan.tool import PLAN_UPDATED_TEXT, read_update_plan
from openwork_core.session.storage import (
    OutgoingMessage,
    StepWrite,
    TurnClosing,
    TurnOpening,
    TurnStatus,
)
from openwork_core.storage.errors import InvalidPlanCommit, RecordNotFound
from openwork_core.storage.postgres import history as history_rows
from openwork_core.storage.postgres.session_storage import PostgresSessionStorage
from openwork_core.storage.postgres.store import PostgresStore
from openwork_tools.modes import SandboxMode
from tests.support import store_rows

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


async def _session(store: PostgresStore, sid: str = "s1") -> PostgresSessionStorage:
    await store.create_session(
        session_id=sid,
        working_directory="/tmp",
        agent="default",
        provider_id=None,
        model_name=None,
        sandbox_mode=SandboxMode.AUTO,
    )
    return PostgresSessionStorage(store.pool, sid)


async def _turn(storage: PostgresSessionStorage, tid: str) -> None:
    opening = TurnOpening(
        turn_id=tid,
        client_request_id=f"req-{tid}",
        provider_id="p",
        model_name="m",
        app_version="test",
    )
    await storage.start_turn(opening, [OutgoingMessage(id=f"{tid}-user", message=user_text("hi"))])


def _result(message_id: str, call_id: str) -> OutgoingMessage:
    block = ToolResultBlock(
        id=call_id,
        name="update_plan",
        output=(TextBlock(text=PLAN_UPDATED_TEXT),),
        state=ToolResultState.SUCCESS,
    )
    return OutgoingMessage(id=message_id, message=Message(role=Role.TOOL, content=(block,)))


def _step(plan: TurnPlan, message_id: str, call_id: str) -> StepWrite:
    return StepWrite(messages=(_result(message_id, call_id),), plan=plan)


def _plan(turn_id: str, *steps: str, explanation: str | None = None, at: datetime = T0) -> TurnPlan:
    items = ",".join(f'{{"step":"{s}","status":"pending"}}' for s in steps)
    expl = "" if explanation is None else f'"explanation":"{explanation}",'
    return read_update_plan(turn_id, f'{{{expl}"plan":[{items}]}}', at)


async def _latest(store: PostgresStore, sid: str = "s1") -> TurnPlan | None:
    """The session's plan as ``GET /v1/sessions/{sid}/plan`` reads it."""
    async with store.pool.acquire() as conn:
        row = await history_rows.fetch_latest_plan(conn, sid)
    if row is None:
        return None
    return TurnPlan(
        turn_id=row.turn_id,
        explanation=row.explanation,
        steps=steps_from_json(row.steps_json),
        updated_at=row.updated_at,
    )


async def _plan_rows(store: PostgresStore) -> int:
    count = await store.pool.fetchval("SELECT count(*) FROM turn_plans")
    assert isinstance(count, int)
    return count


async def test_a_plan_and_its_tool_result_are_committed_together(store: PostgresStore) -> None:
    """update-plan.md §4 step 7: turn_plans and the success result in one transaction."""
    storage = await _session(store)
    await _turn(storage, "t1")
    plan = _plan("t1", "read schema", "add migration", explanation="first")
    (origin,) = await storage.append("t1", _step(plan, "m-r1", "call_1"))
    assert (origin.message_id, origin.sequence) == ("m-r1", 2)
    assert await _latest(store) == plan
    messages = await store_rows.session_messages(store.pool, "s1")
    assert [m.id for m in messages] == ["t1-user", "m-r1"]
    stored = messages[1]
    assert (stored.role, stored.turn_id) == (Role.TOOL, "t1")
    assert (stored.provider_call_id, stored.tool_name) == ("call_1", "update_plan")


async def test_a_failing_message_insert_leaves_no_plan_row(store: PostgresStore) -> None:
    """update-plan.md §4, §8: atomic commit — a duplicate tool-result call id
    (uq_messages_tool_result) rolls the plan back."""
    storage = await _session(store)
    await _turn(storage, "t1")
    await storage.append("t1", StepWrite(messages=(_result("m-other", "call_1"),)))
    with pytest.raises(asyncpg.UniqueViolationError):
        await storage.append("t1", _step(_plan("t1", "a"), "m-r1", "call_1"))
    assert await _latest(store) is None
    assert await _plan_rows(store) == 0
    assert [m.id for m in await store_rows.session_messages(store.pool, "s1")] == [
        "t1-user",
        "m-other",
    ]


async def test_a_failing_second_commit_keeps_the_previous_plan(store: PostgresStore) -> None:
    """update-plan.md §2: a failed call changes nothing."""
    storage = await _session(store)
    await _turn(storage, "t1")
    first = _plan("t1", "a")
    await storage.append("t1", _step(first, "m-r1", "call_1"))
    second = _plan("t1", "b", at=T0 + timedelta(minutes=1))
    with pytest.raises(asyncpg.UniqueViolationError):
        await storage.append("t1", _step(second, "m-r2", "call_1"))
    assert await _latest(store) == first
    assert [m.id for m in await store_rows.session_messages(store.pool, "s1")] == [
        "t1-user",
        "m-r1",
    ]


async def test_a_later_call_replaces_the_whole_plan(store: PostgresStore) -> None:
    """update-plan.md §2, §5: one row per Turn holding only the latest snapshot."""
    storage = await _session(store)
    await _turn(storage, "t1")
    await storage.append("t1", _step(_plan("t1", "a", "b", explanation="why"), "m-r1", "call_1"))
    latest = _plan("t1", "c", at=T0 + timedelta(seconds=5))
    (origin,) = await storage.append("t1", _step(latest, "m-r2", "call_2"))
    assert origin.sequence == 3
    loaded = await _latest(store)
    assert loaded == latest
    assert loaded is not None and loaded.explanation is None
    assert await _plan_rows(store) == 1


async def test_an_explicit_clear_is_stored_as_an_empty_array(store: PostgresStore) -> None:
    """update-plan.md §5: a cleared plan is a row with []."""
    storage = await _session(store)
    await _turn(storage, "t1")
    await storage.append("t1", _step(_plan("t1", "a"), "m-r1", "call_1"))
    await storage.append("t1", _step(_plan("t1"), "m-r2", "call_2"))
    raw = await store.pool.fetchval("SELECT steps FROM turn_plans WHERE turn_id = 't1'")
    assert raw == "[]"
    loaded = await _latest(store)
    assert loaded is not None and loaded.turn_id == "t1" and loaded.steps == ()


async def test_the_session_plan_is_the_latest_turns_even_when_empty(
    store: PostgresStore,
) -> None:
    """update-plan.md §5: the session's plan is the one of its latest Turn that called
    ``update_plan`` (turns.sequence, not row age), an empty plan included; another session's
    plans never show."""
    storage = await _session(store)
    other = await _session(store, "s2")
    await _turn(storage, "t1")
    await storage.append("t1", _step(_plan("t1", "a"), "m-1", "call_1"))
    await storage.finish_turn("t1", TurnClosing(status=TurnStatus.COMPLETED))
    await _turn(storage, "t2")  # no update_plan: no row, the session's plan stays t1's
    assert await _latest(store) == _plan("t1", "a")
    await storage.finish_turn("t2", TurnClosing(status=TurnStatus.COMPLETED))
    await _turn(storage, "t3")
    await storage.append("t3", _step(_plan("t3", "c"), "m-3", "call_3"))
    await _turn(other, "u1")
    await other.append("u1", _step(_plan("u1", "x"), "m-u", "call_u"))
    await storage.append("t3", _step(_plan("t3"), "m-3b", "call_3b"))  # t3 cleared
    await storage.finish_turn("t3", TurnClosing(status=TurnStatus.COMPLETED))
    loaded = await _latest(store)
    assert loaded is not None and (loaded.turn_id, loaded.steps) == ("t3", ())
    assert await _latest(store, "s2") == _plan("u1", "x")


async def test_the_session_plan_follows_turn_order_not_write_order(
    store: PostgresStore,
) -> None:
    """update-plan.md §5: ordered by turns.sequence — an earlier Turn's row written last (the
    newest row version) does not become the session's plan."""
    storage = await _session(store)
    await _turn(storage, "t1")
    await storage.finish_turn("t1", TurnClosing(status=TurnStatus.COMPLETED))
    await _turn(storage, "t2")
    await storage.append("t2", _step(_plan("t2", "b"), "m-2", "call_2"))
    await storage.append("t1", _step(_plan("t1", "a"), "m-1", "call_1"))
    loaded = await _latest(store)
    assert loaded is not None and loaded.turn_id == "t2"


async def test_statuses_whitespace_and_order_round_trip(store: PostgresStore) -> None:
    """update-plan.md §8: statuses round-trip, order and whitespace preserved."""
    storage = await _session(store)
    await _turn(storage, "t1")
    plan = read_update_plan(
        "t1",
        '{"plan":[{"step":"  z  ","status":"completed"},{"step":"a\\n","status":"in_progress"},'
        '{"step":"m","status":"pending"}]}',
        T0,
    )
    await storage.append("t1", _step(plan, "m-r1", "call_1"))
    assert await _latest(store) == plan


async def test_a_message_without_exactly_one_tool_result_is_refused_before_writing(
    store: PostgresStore,
) -> None:
    """update-plan.md §5: the plan's message must be one tool message holding exactly one
    ToolResult block, and the plan must be its own Turn's. The first rule is checked when the
    ``StepWrite`` is built (nothing can reach storage), the second by ``append``."""
    storage = await _session(store)
    await _turn(storage, "t1")
    plan = _plan("t1", "a")
    text_only = OutgoingMessage(id="m-x", message=user_text("hi"))
    with pytest.raises(InvalidPlanCommit):
        StepWrite(messages=(text_only,), plan=plan)
    with pytest.raises(InvalidPlanCommit):
        StepWrite(messages=(_result("m-r", "call_1"), _result("m-s", "call_2")), plan=plan)
    two_results = Message(
        role=Role.TOOL,
        content=(
            *_result("m-r", "call_1").message.content,
            *_result("m-r", "call_2").message.content,
        ),
    )
    with pytest.raises(InvalidPlanCommit):
        StepWrite(messages=(OutgoingMessage(id="m-r", message=two_results),), plan=plan)
    with pytest.raises(InvalidPlanCommit):
        await storage.append("t1", _step(_plan("t2", "a"), "m-r", "call_1"))
    assert await _latest(store) is None
    assert await _plan_rows(store) == 0
    assert [m.id for m in await store_rows.session_messages(store.pool, "s1")] == ["t1-user"]


async def test_a_turn_of_another_session_writes_nothing(store: PostgresStore) -> None:
    """update-plan.md §5: the Turn is locked first; it must exist in the writing session."""
    storage = await _session(store)
    foreign = await _session(store, "s2")
    await _turn(storage, "t1")
    with pytest.raises(RecordNotFound):
        await foreign.append("t1", _step(_plan("t1", "a"), "m-r", "call_1"))
    with pytest.raises(RecordNotFound):
        await storage.append("t9", _step(_plan("t9", "a"), "m-r", "call_1"))
    assert await _latest(store) is None
    assert await _latest(store, "s2") is None
    assert await _plan_rows(store) == 0
    assert [m.id for m in await store_rows.session_messages(store.pool, "s1")] == ["t1-user"]
    assert await store_rows.session_messages(store.pool, "s2") == []


async def test_deleting_the_session_cascades_to_its_plans(store: PostgresStore) -> None:
    """update-plan.md §8: session deletion cascades."""
    storage = await _session(store)
    await _turn(storage, "t1")
    await storage.append("t1", _step(_plan("t1", "a"), "m-r1", "call_1"))
    await store.pool.execute("DELETE FROM sessions WHERE id = 's1'")
    assert await _plan_rows(store) == 0
