"""Agent messages: what a child tells its parent (multi-agent.md §6, §8; context-window.md §7.3).

Pure. An ``AgentMessage`` becomes one User-role ``agent_message`` item whose text is the
``<agent_message>`` envelope; its id is deterministic, so a re-delivery of the same outcome is a
duplicate (mailbox, ``INSERT … ON CONFLICT (id) DO NOTHING``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal, TypeAlias, assert_never

from openwork_chat_state.messages import Message, user_text
from openwork_core.context.errors import AgentMessageTooLarge
from openwork_core.context.item_limits import (
    AGENT_MESSAGE_TOKEN_LIMIT,
    check_agent_message,
    estimate_text_item_tokens,
)
from openwork_core.ids import MessageId, SessionId, TurnId
from openwork_core.storage.records import TurnStatus


class AgentMessageKind(enum.StrEnum):
    FINAL_ANSWER = "final_answer"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


AGENT_MESSAGE_ID_PREFIX = "agent-msg"

LIVE_INTERRUPTED_BODY = "Sub-agent turn was interrupted."
"""Live delivery of a child Turn cancelled through ``interrupt_agent`` (§6)."""

COMPLETED_WITHOUT_RESPONSE_BODY = "Sub-agent completed without a persisted final response."
"""Reconciliation of a completed child Turn without an assistant message (§8)."""

RESTART_INTERRUPTED_BODY = (
    "Sub-agent was interrupted by a process restart and is no longer available. "
    "Spawn a new explorer if this result is still needed."
)
"""Reconciliation of a child Turn marked ``interrupted`` at startup (§8)."""

CANCELLED_ERROR_CODE = "cancelled"
CANCELLED_ERROR_MESSAGE = "Sub-agent turn was cancelled."
"""Reconciliation of a ``cancelled`` child Turn: body ``cancelled: Sub-agent turn was cancelled.``"""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentMessage:
    """``AgentMessage{id, task_name, kind, body}`` (§6)."""

    id: MessageId
    task_name: str
    kind: AgentMessageKind
    body: str


def agent_message_id(
    child_session_id: SessionId, child_turn_id: TurnId, kind: AgentMessageKind
) -> MessageId:
    """``agent-msg:{child_session_id}:{child_turn_id}:{kind}`` (§6)."""
    return MessageId(f"{AGENT_MESSAGE_ID_PREFIX}:{child_session_id}:{child_turn_id}:{kind.value}")


def failure_body(error_code: str, error_message: str) -> str:
    """``<code>: <message>`` — the body of a ``failed`` agent message (§6, §8)."""
    return f"{error_code}: {error_message}"


def render_agent_message(message: AgentMessage) -> str:
    """The envelope of §6, byte for byte (no trailing newline)."""
    return (
        "<agent_message>\n"
        f"<task>{message.task_name}</task>\n"
        f"<kind>{message.kind.value}</kind>\n"
        "<body>\n"
        f"{message.body}\n"
        "</body>\n"
        "</agent_message>"
    )


def agent_message_content(message: AgentMessage) -> Message:
    """The User-role message stored with ``message_kind = 'agent_message'`` (§6)."""
    return user_text(render_agent_message(message))


def check_deliverable(message: AgentMessage) -> int:
    """The envelope's token estimate; raises ``AgentMessageTooLarge`` (code
    ``agent_delivery_failed``) at 4 000 tokens or more (§6, context-window.md §7.3)."""
    return check_agent_message(render_agent_message(message))


def oversized_notice(message: AgentMessage, tokens: int) -> AgentMessage:
    """What the parent receives instead of a message at or over the cap: a ``failed`` message
    under the same id (so delivery stays idempotent) that tells the model what happened."""
    return AgentMessage(
        id=message.id,
        task_name=message.task_name,
        kind=AgentMessageKind.FAILED,
        body=(
            f"agent_delivery_failed: the sub-agent's {message.kind.value} message is estimated at "
            f"{tokens} tokens; agent messages must stay under {AGENT_MESSAGE_TOKEN_LIMIT}. "
            "Ask it for a shorter answer with followup_task."
        ),
    )


def fit_for_delivery(message: AgentMessage) -> AgentMessage:
    """The message itself when it is under the 4 000-token cap, else its oversized notice.

    A decision beyond the spec (docs/multi-agent.md): refusing an oversized answer outright
    would leave it undeliverable forever and make every later turn of the parent fail its
    reconciliation; the notice keeps the parent usable and lets the model follow up."""
    try:
        check_deliverable(message)
    except AgentMessageTooLarge:
        return oversized_notice(message, estimate_text_item_tokens(render_agent_message(message)))
    return message


# -- live terminal delivery (§6) -------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildCompleted:
    final_text: str
    kind: Literal[TurnStatus.COMPLETED] = TurnStatus.COMPLETED


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildFailed:
    error_code: str
    error_message: str
    kind: Literal[TurnStatus.FAILED] = TurnStatus.FAILED


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildCancelled:
    """The child Turn was cancelled (through ``interrupt_agent``)."""

    kind: Literal[TurnStatus.CANCELLED] = TurnStatus.CANCELLED


ChildOutcome: TypeAlias = ChildCompleted | ChildFailed | ChildCancelled


def terminal_agent_message(
    *, child_session_id: SessionId, child_turn_id: TurnId, task_name: str, outcome: ChildOutcome
) -> AgentMessage:
    """What a child's actor delivers to its parent when its Turn finishes (§6):
    Completed → ``final_answer`` / final text; Failed → ``failed`` / ``<code>: <message>``;
    Cancelled → ``interrupted`` / ``Sub-agent turn was interrupted.``"""
    kind: AgentMessageKind
    match outcome:
        case ChildCompleted(final_text=text):
            kind, body = AgentMessageKind.FINAL_ANSWER, text
        case ChildFailed(error_code=code, error_message=msg):
            kind, body = AgentMessageKind.FAILED, failure_body(code, msg)
        case ChildCancelled():
            kind, body = AgentMessageKind.INTERRUPTED, LIVE_INTERRUPTED_BODY
        case _:
            assert_never(outcome)
    return AgentMessage(
        id=agent_message_id(child_session_id, child_turn_id, kind),
        task_name=task_name,
        kind=kind,
        body=body,
    )
