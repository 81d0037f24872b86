"""What Chat State holds after a compaction is installed (compaction.md §5).

Three synthetic User items — the replay of the last real user request, the summary behind its
fixed prefix, the frozen reminder — followed by the raw items after the install boundary, in
order and with their ``MessageKind``. The replay keeps the replayed message's id and sequence in
its origin (DESIGN.md §2 "Replay provenance").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import assert_never

from openwork_chat_state.item import (
    ConversationItem,
    MessageKind,
    RealOrigin,
    SyntheticOrigin,
    SyntheticReason,
)
from openwork_chat_state.messages import Message, Role, user_text
from openwork_core.ids import MessageId
from openwork_core.session.compaction.errors import MissingLastUser
from openwork_core.storage.compaction_records import CheckpointRecord

SUMMARY_PREFIX = (
    "The earlier Conversation was compacted into the following continuation summary. Treat it "
    "as prior conversation context, preserve its uncertainty, and continue from it:"
)
SUMMARY_PREFIX_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayAnchor:
    """The persisted message a replay stands for."""

    message_id: MessageId
    sequence: int


def is_real_user_request(item: ConversationItem) -> bool:
    """§5: role User, kind Normal, origin a real message or a replay. Skill bodies, agent
    messages, World State, summaries and reminders never qualify."""
    if item.message.role is not Role.USER or item.kind is not MessageKind.NORMAL:
        return False
    match item.origin:
        case RealOrigin():
            return True
        case SyntheticOrigin(reason=reason):
            return reason is SyntheticReason.LAST_USER_REQUEST_REPLAY
        case _:
            assert_never(item.origin)


def last_real_user(items: Sequence[ConversationItem]) -> ConversationItem | None:
    return next((i for i in reversed(items) if is_real_user_request(i)), None)


def replay_anchor(item: ConversationItem) -> ReplayAnchor:
    """The persisted message behind a real user request (a replay points at its original)."""
    match item.origin:
        case RealOrigin(message_id=message_id, sequence=sequence):
            return ReplayAnchor(message_id=message_id, sequence=sequence)
        case SyntheticOrigin(source_message_id=message_id, source_sequence=sequence):
            if message_id is None or sequence is None:
                raise MissingLastUser()
            return ReplayAnchor(message_id=message_id, sequence=sequence)
        case _:
            assert_never(item.origin)


def summary_text(summary: str) -> str:
    return f"{SUMMARY_PREFIX}{SUMMARY_PREFIX_SEPARATOR}{summary}"


def build_compacted_items(
    checkpoint: CheckpointRecord,
    replayed_message: Message,
    raw_after_boundary: Sequence[ConversationItem],
) -> tuple[ConversationItem, ...]:
    """Replay, summary, reminder, then the raw items after the install boundary."""
    if checkpoint.last_user_message_id is None or checkpoint.last_user_message_sequence is None:
        raise MissingLastUser()

    def synthetic(message: Message, reason: SyntheticReason) -> ConversationItem:
        return ConversationItem(
            message=message,
            kind=MessageKind.NORMAL,
            origin=SyntheticOrigin(compaction_id=checkpoint.id, reason=reason),
        )

    replay = ConversationItem(
        message=Message(role=Role.USER, content=replayed_message.content),
        kind=MessageKind.NORMAL,
        origin=SyntheticOrigin(
            compaction_id=checkpoint.id,
            reason=SyntheticReason.LAST_USER_REQUEST_REPLAY,
            source_message_id=checkpoint.last_user_message_id,
            source_sequence=checkpoint.last_user_message_sequence,
        ),
    )
    return (
        replay,
        synthetic(user_text(summary_text(checkpoint.summary)), SyntheticReason.COMPACTION_SUMMARY),
        synthetic(user_text(checkpoint.runtime_reminder), SyntheticReason.SYSTEM_REMINDER),
        *raw_after_boundary,
    )
