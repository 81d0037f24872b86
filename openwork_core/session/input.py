"""Turn input: what the client sends and what the runner persists (session-runtime.md §2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import Message, Role, TextBlock
from openwork_core.ids import new_message_id
from openwork_core.session.errors import EmptyInput
from openwork_core.session.storage import OutgoingMessage


@dataclass(frozen=True, slots=True, kw_only=True)
class TextInput:
    type: Literal["text"] = "text"
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillInput:
    type: Literal["skill"] = "skill"
    name: str
    path: str


UserInput: TypeAlias = TextInput | SkillInput


@dataclass(frozen=True, slots=True, kw_only=True)
class PreparedTurnInput:
    """Materialized user-role messages under fresh ids, written with the turn row: skill body
    snapshots first, then the visible message."""

    messages: tuple[OutgoingMessage, ...]


def input_message(message: Message, kind: MessageKind = MessageKind.NORMAL) -> OutgoingMessage:
    return OutgoingMessage(id=new_message_id(), message=message, kind=kind)


def visible_user_message(parts: tuple[UserInput, ...]) -> OutgoingMessage:
    """The user's visible message from the text parts; at least one non-blank text is required."""
    texts = [p.text for p in parts if isinstance(p, TextInput)]
    if not any(t.strip() for t in texts):
        raise EmptyInput()
    content = tuple(TextBlock(text=t) for t in texts if t)
    return input_message(Message(role=Role.USER, content=content))
