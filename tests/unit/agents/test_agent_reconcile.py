"""Restart reconciliation, pure part (multi-agent.md §8)."""

from __future__ import annotations

import pytest

from openwork_core.agents.messages import AgentMessage, AgentMessageKind, agent_message_id
from openwork_core.agents.reconcile import (
    ChildTurn,
    TurnlessChild,
    plan_reconciliation,
    reconciliation_message,
)
from openwork_core.storage.records import TurnStatus

RESTART_BODY = (
    "Sub-agent was interrupted by a process restart and is no longer available. "
    "Spawn a new explorer if this result is still needed."
)


def _turn(
    status: TurnStatus,
    *,
    turn_id: str = "t1",
    text: str | None = None,
    code: str | None = None,
    message: str | None = None,
) -> ChildTurn:
    return ChildTurn(
        child_session_id="ses_c",
        task_name="scan",
        turn_id=turn_id,
        status=status,
        error_code=code,
        error_message=message,
        last_assistant_text=text,
    )


@pytest.mark.parametrize(
    ("turn", "kind", "body"),
    [
        (
            _turn(TurnStatus.COMPLETED, text="auth lives in a.py:3"),
            "final_answer",
            "auth lives in a.py:3",
        ),
        (
            _turn(TurnStatus.COMPLETED, text=None),
            "final_answer",
            "Sub-agent completed without a persisted final response.",
        ),
        (
            _turn(TurnStatus.COMPLETED, text=""),
            "final_answer",
            "Sub-agent completed without a persisted final response.",
        ),
        (
            _turn(TurnStatus.INTERRUPTED, code="process_restart", message="restarted"),
            "interrupted",
            RESTART_BODY,
        ),
        (_turn(TurnStatus.CANCELLED), "failed", "cancelled: Sub-agent turn was cancelled."),
        (
            _turn(
                TurnStatus.FAILED, code="doom_loop", message="doom loop detected for tool 'grep'"
            ),
            "failed",
            "doom_loop: doom loop detected for tool 'grep'",
        ),
    ],
)
def test_each_terminal_status_maps_to_the_kind_and_body_of_the_section_8_table(
    turn: ChildTurn, kind: str, body: str
) -> None:
    """§8 table: completed, interrupted, cancelled, failed."""
    message = reconciliation_message(turn)
    assert message == AgentMessage(
        id=f"agent-msg:ses_c:t1:{kind}", task_name="scan", kind=AgentMessageKind(kind), body=body
    )


def test_a_running_child_turn_is_not_reconciled() -> None:
    """§8: only terminal child Turns."""
    assert reconciliation_message(_turn(TurnStatus.RUNNING)) is None
    assert (
        plan_reconciliation(delivered_ids=(), child_turns=[_turn(TurnStatus.RUNNING)]).messages
        == ()
    )


def test_a_failed_row_without_error_columns_still_gets_a_code_colon_message_body() -> None:
    message = reconciliation_message(_turn(TurnStatus.FAILED))
    assert message is not None
    assert message.body == "unknown_error: Sub-agent turn failed without a recorded error."


def test_turns_whose_message_id_is_already_in_the_parent_are_skipped() -> None:
    """§8: idempotence by message id; reconciliation delivers exactly once."""
    done = _turn(TurnStatus.COMPLETED, turn_id="t1", text="a")
    failed = _turn(TurnStatus.FAILED, turn_id="t2", code="x", message="y")
    first = plan_reconciliation(delivered_ids=frozenset(), child_turns=[done, failed])
    assert [m.id for m in first.messages] == [
        "agent-msg:ses_c:t1:final_answer",
        "agent-msg:ses_c:t2:failed",
    ]
    again = plan_reconciliation(
        delivered_ids=frozenset(m.id for m in first.messages), child_turns=[done, failed]
    )
    assert again.messages == ()


def test_the_same_turn_listed_twice_is_planned_once() -> None:
    turn = _turn(TurnStatus.COMPLETED, text="a")
    assert len(plan_reconciliation(delivered_ids=(), child_turns=[turn, turn]).messages) == 1


def test_a_cancelled_turn_whose_live_interrupted_message_was_persisted_is_not_reported_again() -> (
    None
):
    """§6 vs §8: live Cancelled → ``interrupted`` id, reconciliation → ``failed`` id; the ids
    differ, so the live id counts as delivered too (docs/multi-agent.md, readings)."""
    cancelled = _turn(TurnStatus.CANCELLED, turn_id="t9")
    live_id = agent_message_id("ses_c", "t9", AgentMessageKind.INTERRUPTED)
    assert plan_reconciliation(delivered_ids={live_id}, child_turns=[cancelled]).messages == ()
    unreported = plan_reconciliation(delivered_ids=set(), child_turns=[cancelled]).messages
    assert [m.id for m in unreported] == ["agent-msg:ses_c:t9:failed"]


def test_an_interrupted_restart_turn_is_reported_even_if_another_turn_of_the_child_was() -> None:
    """§8: per Turn, not per child."""
    old = _turn(TurnStatus.COMPLETED, turn_id="t1", text="a")
    restarted = _turn(TurnStatus.INTERRUPTED, turn_id="t2")
    plan = plan_reconciliation(
        delivered_ids={agent_message_id("ses_c", "t1", AgentMessageKind.FINAL_ANSWER)},
        child_turns=[old, restarted],
    )
    assert [m.kind for m in plan.messages] == [AgentMessageKind.INTERRUPTED]


def test_turnless_children_are_passed_through_for_deletion() -> None:
    """§8 step 1: zero-turn children (failed spawns) are deleted and their names released."""
    orphan = TurnlessChild(child_session_id="ses_o", task_name="orphan")
    plan = plan_reconciliation(delivered_ids=(), child_turns=(), turnless_children=[orphan])
    assert plan.deleted == (orphan,)
    assert plan.messages == ()
