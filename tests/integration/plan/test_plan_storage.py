"""turn_plans on real PostgreSQL (update-plan.md §4 step 7, §5)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from openwork_chat_state import MessageKind
from openwork_chat_state.messages import (
    Message,
    Role,
    TextBlock,
    ToolResultBlock,
    ToolResultState,
    user_text,
)
from openwork_core.plan import PLAN_UPDATED_TEXT, TurnPlan, read_update_plan
from openwork_core.storage import PostgresStore
from openwork_core.storage.codec import new_message
from openwork_core.storage.errors import InvalidPlanCommit, RecordNotFound
from openwork_core.storage.postgres.plans import PlanStore
from openwork_core.storage.records import NewMessage, TurnStatus
from openwork_tools.modes import SandboxMode
from tests.support import store_rows

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


async def _session(store: PostgresStore, sid: str = "s1") -> None:
    await store.create_session(
        session_id=sid,
        working_directory="/tmp",
        agent="default",
        provider_id=None,
        model_name=None,
        sandbox_mode=SandboxMode.AUTO,
    )


async def _turn(store: PostgresStore, tid: str, sid: str = "s1") -> None:
    await store_rows.start_turn(
        store.pool,
        session_id=sid,
        turn_id=tid,
        client_request_id=f"req-{tid}",
        provider_id="p",
        model_name="m",
        app_version="test",
        messages=[new_message(f"{tid}-user", user_text("hello"), MessageKind.NORMAL)],
    )


def _result(message_id: str, call_id: str) -> NewMessage:
    block = ToolResultBlock(
        id=call_id,
        name="update_plan",
        output=(TextBlock(text=PLAN_UPDATED_TEXT),),
        state=ToolResultState.SUCCESS,
    )
    return new_message(message_id, Message(role=Role.TOOL, content=(block,)), MessageKind.NORMAL)


def _plan(turn_id: str, *steps: str, explanation: str | None = None, at: datetime = T0) -> TurnPlan:
    items = ",".join(f'{{"step":"{s}","status":"pending"}}' for s in steps)
    expl = "" if explanation is None else f'"explanation":"{explanation}",'
    return read_update_plan(turn_id, f'{{{expl}"plan":[{items}]}}', at)


async def test_a_plan_and_its_tool_result_are_committed_together(store: PostgresStore) -> None:
    """update-plan.md §4 step 7: turn_plans and the success result in one transaction."""
    await _session(store)
    await _turn(store, "t1")
    plans = PlanStore(store.pool)
    plan = _plan("t1", "read schema", "add migration", explanation="first")
    stored = await plans.commit_plan_update("s1", "t1", plan, _result("m-r1", "call_1"))
    assert (stored.id, stored.sequence, stored.role) == ("m-r1", 2, Role.TOOL)
    assert (stored.provider_call_id, stored.tool_name) == ("call_1", "update_plan")
    assert await plans.load_turn_plan("t1") == plan
    messages = await store_rows.session_messages(store.pool, "s1")
    assert [m.id for m in messages] == ["t1-user", "m-r1"]


async def test_a_failing_message_insert_leaves_no_plan_row(store: PostgresStore) -> None:
    """update-plan.md §4, §8: atomic commit — a duplicate tool-result call id
    (uq_messages_tool_result) rolls the plan back."""
    await _session(store)
    await _turn(store, "t1")
    await store_rows.append_messages(store.pool, "s1", "t1", [_result("m-other", "call_1")])
    plans = PlanStore(store.pool)
    with pytest.raises(asyncpg.UniqueViolationError):
        await plans.commit_plan_update("s1", "t1", _plan("t1", "a"), _result("m-r1", "call_1"))
    assert await plans.load_turn_plan("t1") is None
    assert [m.id for m in await store_rows.session_messages(store.pool, "s1")] == [
        "t1-user",
        "m-other",
    ]


async def test_a_failing_second_commit_keeps_the_previous_plan(store: PostgresStore) -> None:
    """update-plan.md §2: a failed call changes nothing."""
    await _session(store)
    await _turn(store, "t1")
    plans = PlanStore(store.pool)
    first = _plan("t1", "a")
    await plans.commit_plan_update("s1", "t1", first, _result("m-r1", "call_1"))
    second = _plan("t1", "b", at=T0 + timedelta(minutes=1))
    with pytest.raises(asyncpg.UniqueViolationError):
        await plans.commit_plan_update("s1", "t1", second, _result("m-r2", "call_1"))
    assert await plans.load_turn_plan("t1") == first


async def test_a_later_call_replaces_the_whole_plan(store: PostgresStore) -> None:
    """update-plan.md §2, §5: one row per Turn holding only the latest snapshot."""
    await _session(store)
    await _turn(store, "t1")
    plans = PlanStore(store.pool)
    await plans.commit_plan_update(
        "s1", "t1", _plan("t1", "a", "b", explanation="why"), _result("m-r1", "call_1")
    )
    latest = _plan("t1", "c", at=T0 + timedelta(seconds=5))
    stored = await plans.commit_plan_update("s1", "t1", latest, _result("m-r2", "call_2"))
    assert stored.sequence == 3
    loaded = await plans.load_turn_plan("t1")
    assert loaded == latest
    assert loaded is not None and loaded.explanation is None
    count = await store.pool.fetchval("SELECT count(*) FROM turn_plans WHERE turn_id = 't1'")
    assert count == 1


async def test_an_explicit_clear_is_stored_as_an_empty_array(store: PostgresStore) -> None:
    """update-plan.md §5: a cleared plan is a row with []."""
    await _session(store)
    await _turn(store, "t1")
    plans = PlanStore(store.pool)
    await plans.commit_plan_update("s1", "t1", _plan("t1", "a"), _result("m-r1", "call_1"))
    await plans.commit_plan_update("s1", "t1", _plan("t1"), _result("m-r2", "call_2"))
    raw = await store.pool.fetchval("SELECT steps FROM turn_plans WHERE turn_id = 't1'")
    assert raw == "[]"
    loaded = await plans.load_turn_plan("t1")
    assert loaded is not None and loaded.steps == ()


async def test_session_plans_come_in_turn_order_including_empty_ones(
    store: PostgresStore,
) -> None:
    """update-plan.md §5: load_session_turn_plans ordered by turns.sequence, empty included."""
    await _session(store)
    await _session(store, "s2")
    plans = PlanStore(store.pool)
    await _turn(store, "t1")
    await plans.commit_plan_update("s1", "t1", _plan("t1", "a"), _result("m-1", "call_1"))
    await store_rows.finish_turn(store.pool, "t1", TurnStatus.COMPLETED)
    await _turn(store, "t2")  # no update_plan: no row
    await store_rows.finish_turn(store.pool, "t2", TurnStatus.COMPLETED)
    await _turn(store, "t3")
    await plans.commit_plan_update("s1", "t3", _plan("t3", "c"), _result("m-3", "call_3"))
    await _turn(store, "u1", "s2")
    await plans.commit_plan_update("s2", "u1", _plan("u1", "x"), _result("m-u", "call_u"))
    # rewritten last, so the newest row version belongs to the earliest Turn
    await plans.commit_plan_update("s1", "t1", _plan("t1"), _result("m-1b", "call_1b"))
    loaded = await plans.load_session_turn_plans("s1")
    assert [(p.turn_id, [s.step for s in p.steps]) for p in loaded] == [("t1", []), ("t3", ["c"])]


async def test_statuses_whitespace_and_order_round_trip(store: PostgresStore) -> None:
    """update-plan.md §8: statuses round-trip, order and whitespace preserved."""
    await _session(store)
    await _turn(store, "t1")
    plans = PlanStore(store.pool)
    plan = read_update_plan(
        "t1",
        '{"plan":[{"step":"  z  ","status":"completed"},{"step":"a\\n","status":"in_progress"},'
        '{"step":"m","status":"pending"}]}',
        T0,
    )
    await plans.commit_plan_update("s1", "t1", plan, _result("m-r1", "call_1"))
    assert await plans.load_turn_plan("t1") == plan


async def test_a_message_without_exactly_one_tool_result_is_refused_before_writing(
    store: PostgresStore,
) -> None:
    """update-plan.md §5: the message must hold exactly one ToolResult block."""
    await _session(store)
    await _turn(store, "t1")
    plans = PlanStore(store.pool)
    text_only = new_message("m-x", user_text("hi"), MessageKind.NORMAL)
    with pytest.raises(InvalidPlanCommit):
        await plans.commit_plan_update("s1", "t1", _plan("t1", "a"), text_only)
    with pytest.raises(InvalidPlanCommit):
        await plans.commit_plan_update("s1", "t1", _plan("t2", "a"), _result("m-r", "call_1"))
    assert await plans.load_turn_plan("t1") is None


async def test_an_unknown_turn_writes_nothing(store: PostgresStore) -> None:
    """update-plan.md §5: the Turn is locked first; it must exist in the session."""
    await _session(store)
    await _session(store, "s2")
    await _turn(store, "t1")
    plans = PlanStore(store.pool)
    with pytest.raises(RecordNotFound):
        await plans.commit_plan_update("s2", "t1", _plan("t1", "a"), _result("m-r", "call_1"))
    assert await plans.load_turn_plan("t1") is None


async def test_deleting_the_session_cascades_to_its_plans(store: PostgresStore) -> None:
    """update-plan.md §8: session deletion cascades."""
    await _session(store)
    await _turn(store, "t1")
    plans = PlanStore(store.pool)
    await plans.commit_plan_update("s1", "t1", _plan("t1", "a"), _result("m-r1", "call_1"))
    await store.pool.execute("DELETE FROM sessions WHERE id = 's1'")
    assert await plans.load_turn_plan("t1") is None
