r"""Message ↔ row conversion. Stored content is the JSON array of content blocks; tool-result
blocks additionally carry their UI ``artifacts`` there, which never reach the model.

Text PostgreSQL cannot hold (docs/reliability.md "NUL-safe storage"): ``text`` and ``jsonb``
refuse U+0000, and UTF-8 has no encoding for a lone surrogate (U+D800–U+DFFF, e.g. a file name
decoded with ``surrogateescape``). ``storable_text`` replaces each such code point by the six
characters of its JSON escape (``\u0000``, ``\udc80``): the model can read it, the rule is
deterministic and idempotent, and every message is encoded through it before it is written, so
the row, the Conversation rebuilt from it after a restart and the request built from either are
the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import orjson
from pydantic import JsonValue

from openwork_chat_state.item import ConversationItem, MessageKind, RealOrigin
from openwork_chat_state.messages import CONTENT_BLOCKS, Message, Role, TextBlock
from openwork_core.ids import MessageId
from openwork_core.storage.records import NewMessage, StoredMessage

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def is_storable_text(text: str) -> bool:
    """False when ``text`` holds U+0000 or a lone surrogate (PostgreSQL cannot store it)."""
    return _UNSTORABLE.search(text) is None


def storable_text(text: str) -> str:
    """``text`` with each U+0000 and lone surrogate replaced by its six-character JSON escape.

    Pure, deterministic and idempotent (the result holds neither), and the identity on text
    PostgreSQL can hold."""
    return text if is_storable_text(text) else _UNSTORABLE.sub(_escape, text)


def storable_json(value: JsonValue) -> JsonValue:
    """``storable_text`` applied to every string of a JSON value, keys included."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, list):
        return [storable_json(v) for v in value]
    if isinstance(value, dict):
        return {storable_text(k): storable_json(v) for k, v in value.items()}
    return value


def storable_message(message: Message) -> Message:
    """The message as it will be stored and read back (the same object when it is storable)."""
    try:  # fast path: orjson refuses lone surrogates and writes U+0000 as the escape \u0000
        if b"\\u0000" not in orjson.dumps(message.content):
            return message
    except orjson.JSONEncodeError:
        pass
    raw: JsonValue = CONTENT_BLOCKS.dump_python(list(message.content), mode="json")
    cleaned = storable_json(raw)
    if cleaned == raw:
        return message
    return Message(role=message.role, content=tuple(CONTENT_BLOCKS.validate_python(cleaned)))


def encode_content(message: Message, artifacts: Sequence[JsonValue] = ()) -> str:
    """The stored JSON of a message's blocks; artifacts go into its single tool-result block.
    Unstorable text is escaped first (``storable_text``)."""
    if not artifacts:
        try:  # the common case: storable as it is (``storable_message``'s test), dumped once
            encoded = orjson.dumps(message.content)
        except orjson.JSONEncodeError:
            pass
        else:
            if b"\\u0000" not in encoded:
                return encoded.decode()
    message = storable_message(message)
    artifacts = [storable_json(a) for a in artifacts]
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
