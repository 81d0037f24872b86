"""Builders shared by the compaction tests: a valid summary, items, scripted responses."""

from __future__ import annotations

from datetime import UTC, datetime

from openwork_chat_state.item import (
    ConversationItem,
    MessageKind,
    RealOrigin,
    SyntheticOrigin,
    SyntheticReason,
)
from openwork_chat_state.messages import (
    Message,
    Role,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
)
from openwork_core.plan.model import PlanStep, PlanStepStatus, TurnPlan
from openwork_core.session.compaction.summary import (
    SUMMARY_HEADINGS,
    SUMMARY_ROOT_CLOSE,
    SUMMARY_ROOT_OPEN,
)

SECTION_TEXT = "The user asked for a careful refactor of the storage layer; details follow here."


def summary_body(
    sections: dict[int, str] | None = None, *, headings: tuple[str, ...] = SUMMARY_HEADINGS
) -> str:
    chosen = sections or {}
    lines: list[str] = []
    for number, heading in enumerate(headings, start=1):
        lines.append(heading)
        lines.append(chosen.get(number, f"{SECTION_TEXT} ({number})"))
    return "\n".join(lines)


def valid_summary(
    sections: dict[int, str] | None = None, *, headings: tuple[str, ...] = SUMMARY_HEADINGS
) -> str:
    """A root block that passes every §3.2 rule (well over 500 characters)."""
    return f"{SUMMARY_ROOT_OPEN}\n{summary_body(sections, headings=headings)}\n{SUMMARY_ROOT_CLOSE}"


def real(
    message: Message,
    sequence: int,
    kind: MessageKind = MessageKind.NORMAL,
    message_id: str | None = None,
) -> ConversationItem:
    return ConversationItem(
        message=message,
        kind=kind,
        origin=RealOrigin(message_id=message_id or f"m{sequence}", sequence=sequence),
    )


def synthetic(
    message: Message,
    reason: SyntheticReason,
    *,
    source_id: str | None = None,
    source_sequence: int | None = None,
) -> ConversationItem:
    return ConversationItem(
        message=message,
        kind=MessageKind.NORMAL,
        origin=SyntheticOrigin(
            compaction_id="c-old",
            reason=reason,
            source_message_id=source_id,
            source_sequence=source_sequence,
        ),
    )


def assistant(text: str = "", calls: tuple[tuple[str, str], ...] = ()) -> Message:
    blocks: list[TextBlock | ToolCallBlock] = []
    if text:
        blocks.append(TextBlock(text=text))
    blocks.extend(ToolCallBlock(id=call_id, name=name, input="{}") for call_id, name in calls)
    return Message(role=Role.ASSISTANT, content=tuple(blocks))


def tool_result(call_id: str, text: str, name: str = "read") -> Message:
    return Message(
        role=Role.TOOL,
        content=(
            ToolResultBlock(
                id=call_id, name=name, output=(TextBlock(text=text),), state=ToolResultState.SUCCESS
            ),
        ),
    )


def turn_plan(*steps: tuple[str, str], explanation: str | None = None) -> TurnPlan:
    """A runner ``current_plan`` with ``(step, status)`` pairs."""
    return TurnPlan(
        turn_id="t-plan",
        explanation=explanation,
        steps=tuple(PlanStep(step=step, status=PlanStepStatus(status)) for step, status in steps),
        updated_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
