"""Restart reconciliation of a root's direct children (multi-agent.md §8). Pure: the store reads the
rows inside one transaction that locks the parent ``sessions`` row; this decides what to enqueue.

| child Turn status | kind | body |
| --- | --- | --- |
| ``completed`` | ``final_answer`` | the Turn's last assistant text, or the fixed fallback |
| ``interrupted`` | ``interrupted`` | the fixed restart text |
| ``cancelled`` | ``failed`` | ``cancelled: Sub-agent turn was cancelled.`` |
| ``failed`` | ``failed`` | ``<error_code>: <error_message>`` |

A Turn is skipped when the id of that row is already among the parent's messages. Reading of the
spec (documented in docs/multi-agent.md): a ``cancelled`` Turn is also skipped when its live
``interrupted`` message (same child Turn) is already there, so an interrupt is reported once.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import assert_never

from openwork_core.agents.messages import (
    CANCELLED_ERROR_CODE,
    CANCELLED_ERROR_MESSAGE,
    COMPLETED_WITHOUT_RESPONSE_BODY,
    RESTART_INTERRUPTED_BODY,
    AgentMessage,
    AgentMessageKind,
    agent_message_id,
    failure_body,
)
from openwork_core.ids import SessionId, TurnId
from openwork_core.storage.records import TurnStatus

UNKNOWN_FAILURE_CODE = "unknown_error"
UNKNOWN_FAILURE_MESSAGE = "Sub-agent turn failed without a recorded error."
"""A ``failed`` row without ``error_code`` / ``error_message`` (the runner always writes both)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildTurn:
    """One terminal Turn of a direct child, as the store reads it."""

    child_session_id: SessionId
    task_name: str
    turn_id: TurnId
    status: TurnStatus
    error_code: str | None
    error_message: str | None
    last_assistant_text: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnlessChild:
    """A child session with zero Turns (a failed spawn): deleted, its name released."""

    child_session_id: SessionId
    task_name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Reconciliation:
    """What ``start_turn`` does before the user Turn: close and forget ``deleted`` children
    (already deleted from the database), then check and enqueue ``messages`` in order."""

    deleted: tuple[TurnlessChild, ...]
    messages: tuple[AgentMessage, ...]


def _reconciled(turn: ChildTurn) -> tuple[AgentMessageKind, str] | None:
    match turn.status:
        case TurnStatus.COMPLETED:
            text = turn.last_assistant_text
            body = text if text else COMPLETED_WITHOUT_RESPONSE_BODY
            return AgentMessageKind.FINAL_ANSWER, body
        case TurnStatus.INTERRUPTED:
            return AgentMessageKind.INTERRUPTED, RESTART_INTERRUPTED_BODY
        case TurnStatus.CANCELLED:
            return AgentMessageKind.FAILED, failure_body(
                CANCELLED_ERROR_CODE, CANCELLED_ERROR_MESSAGE
            )
        case TurnStatus.FAILED:
            return AgentMessageKind.FAILED, failure_body(
                turn.error_code or UNKNOWN_FAILURE_CODE,
                turn.error_message or UNKNOWN_FAILURE_MESSAGE,
            )
        case TurnStatus.RUNNING:
            return None
        case _:
            assert_never(turn.status)


def reconciliation_message(turn: ChildTurn) -> AgentMessage | None:
    """The §8 message for one child Turn; ``None`` for a running Turn."""
    reconciled = _reconciled(turn)
    if reconciled is None:
        return None
    kind, body = reconciled
    return AgentMessage(
        id=agent_message_id(turn.child_session_id, turn.turn_id, kind),
        task_name=turn.task_name,
        kind=kind,
        body=body,
    )


def _already_delivered(turn: ChildTurn, message: AgentMessage, delivered: Collection[str]) -> bool:
    if message.id in delivered:
        return True
    if turn.status is TurnStatus.CANCELLED:
        live_id = agent_message_id(
            turn.child_session_id, turn.turn_id, AgentMessageKind.INTERRUPTED
        )
        return live_id in delivered
    return False


def plan_reconciliation(
    *,
    delivered_ids: Collection[str],
    child_turns: Iterable[ChildTurn],
    turnless_children: Iterable[TurnlessChild] = (),
) -> Reconciliation:
    """The messages to enqueue, in the order of ``child_turns``, skipping ids already present
    (and ids repeated in the input); plus the turnless children to delete."""
    seen = set(delivered_ids)
    messages: list[AgentMessage] = []
    for turn in child_turns:
        message = reconciliation_message(turn)
        if message is None or _already_delivered(turn, message, seen):
            continue
        seen.add(message.id)
        messages.append(message)
    return Reconciliation(deleted=tuple(turnless_children), messages=tuple(messages))
