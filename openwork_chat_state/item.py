"""Conversation items: a message plus where it came from and what kind of message it is (§4.1)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from openwork_chat_state.ids import CompactionId, MessageId
from openwork_chat_state.messages import Message


class MessageKind(enum.StrEnum):
    """``normal`` is user-visible input plus every assistant and tool message; the other three are
    user-role context that is never "the user's request"."""

    NORMAL = "normal"
    SKILL_INSTRUCTION = "skill_instruction"
    AGENT_MESSAGE = "agent_message"
    WORLD_STATE = "world_state"


class SyntheticReason(enum.StrEnum):
    LAST_USER_REQUEST_REPLAY = "last_user_request_replay"
    COMPACTION_SUMMARY = "compaction_summary"
    SYSTEM_REMINDER = "system_reminder"


@dataclass(frozen=True, slots=True, kw_only=True)
class RealOrigin:
    """One row of the ``messages`` table."""

    type: Literal["real"] = "real"
    message_id: MessageId
    sequence: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SyntheticOrigin:
    """An item made by the compaction projection. A replay keeps the replayed message's id and
    sequence (compaction.md §5)."""

    type: Literal["synthetic"] = "synthetic"
    compaction_id: CompactionId
    reason: SyntheticReason
    source_message_id: MessageId | None = None
    source_sequence: int | None = None


ItemOrigin: TypeAlias = RealOrigin | SyntheticOrigin


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationItem:
    """An immutable Conversation entry. ``_memo`` holds values derived from the item by pure
    functions (serialized size, projections), computed once because the item never changes."""

    message: Message
    kind: MessageKind = MessageKind.NORMAL
    origin: ItemOrigin
    _memo: dict[str, object] = field(default_factory=dict, compare=False, repr=False, hash=False)

    @property
    def sequence(self) -> int | None:
        return self.origin.sequence if isinstance(self.origin, RealOrigin) else None

    @property
    def message_id(self) -> str | None:
        return self.origin.message_id if isinstance(self.origin, RealOrigin) else None
