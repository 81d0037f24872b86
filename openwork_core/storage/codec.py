"""Message ↔ row conversion. Stored content is the JSON array of content blocks; tool-result
blocks additionally carry their UI ``artifacts`` there, which never reach the model."""

from __future__ import annotations

from collections.abc import Sequence

import orjson
from pydantic import JsonValue

from openwork_chat_state.item import ConversationItem, MessageKind, RealOrigin
from openwork_chat_state.messages import CONTENT_BLOCKS, Message, Role, TextBlock
from openwork_core.ids import MessageId
from openwork_core.storage.records import NewMessage, StoredMessage


def encode_content(message: Message, artifacts: Sequence[JsonValue] = ()) -> str:
    """The stored JSON of a message's blocks; artifacts go into its single tool-result block."""
    if not artifacts:
        return orjson.dumps(message.content).decode()
    blocks = orjson.loads(orjson.dumps(message.content))
    results = [b for b in blocks if b.get("type") == "tool_result"]
    if len(results) != 1:
        raise ValueError("artifacts belong to a message holding exactly one tool result")
    results[0]["artifacts"] = list(artifacts)
    return orjson.dumps(blocks).decode()


def new_message(
    message_id: MessageId, message: Message, kind: MessageKind, artifacts: Sequence[JsonValue] = ()
) -> NewMessage:
    call_id: str | None = None
    tool_name: str | None = None
    if message.role is Role.TOOL:
        (result,) = message.tool_results
        call_id, tool_name = result.id, result.name
    return NewMessage(
        id=message_id,
        role=message.role,
        kind=kind,
        content=encode_content(message, artifacts),
        provider_call_id=call_id,
        tool_name=tool_name,
    )


def decode_message(stored: StoredMessage) -> Message:
    return Message(role=stored.role, content=tuple(CONTENT_BLOCKS.validate_json(stored.content)))


def content_text(content: str) -> str:
    """The concatenated text blocks of stored content (a completed turn's final answer)."""
    return "".join(
        b.text for b in CONTENT_BLOCKS.validate_json(content) if isinstance(b, TextBlock)
    )


def to_item(stored: StoredMessage) -> ConversationItem:
    return ConversationItem(
        message=decode_message(stored),
        kind=stored.kind,
        origin=RealOrigin(message_id=stored.id, sequence=stored.sequence),
    )
