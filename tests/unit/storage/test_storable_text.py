"""NUL-safe storage rule (docs/reliability.md "NUL-safe storage"): text PostgreSQL cannot hold
is escaped deterministically, readably and idempotently; storable text is left alone."""

from __future__ import annotations

import orjson
from hypothesis import given
from hypothesis import strategies as st

from openwork_chat_state.messages import (
    Message,
    Role,
    TextBlock,
    ToolResultBlock,
    ToolResultState,
    user_text,
)
from openwork_core.storage.codec import (
    encode_content,
    is_storable_text,
    storable_message,
    storable_text,
)

ANY_TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()))


def test_nul_and_a_lone_surrogate_become_the_json_escape_the_model_can_read() -> None:
    assert storable_text("a\x00b") == "a\\u0000b"
    assert storable_text("name-\udc80.txt") == "name-\\udc80.txt"
    assert storable_text("\ud83d") == "\\ud83d"


@given(ANY_TEXT)
def test_the_rule_is_deterministic_idempotent_and_its_result_is_storable(text: str) -> None:
    once = storable_text(text)
    assert is_storable_text(once)
    assert storable_text(once) == once
    assert storable_text(text) == once
    once.encode("utf-8")  # no lone surrogate left


@given(ANY_TEXT.filter(is_storable_text))
def test_storable_text_is_left_exactly_as_it_was(text: str) -> None:
    assert storable_text(text) == text


@given(ANY_TEXT)
def test_any_message_encodes_to_json_postgresql_accepts(text: str) -> None:
    """No "\\u0000" escape (jsonb refuses it) and valid UTF-8 (orjson refuses surrogates)."""
    for message in (user_text(text), _tool_result(text)):
        content = encode_content(message)
        assert "\\u0000" not in content.replace("\\\\", "")
        content.encode("utf-8")
        assert orjson.loads(content)


def test_a_storable_message_is_returned_as_the_same_object() -> None:
    message = user_text("plain text")
    assert storable_message(message) is message


def _tool_result(text: str) -> Message:
    block = ToolResultBlock(
        id="call_1", name="bash", state=ToolResultState.SUCCESS, output=(TextBlock(text=text),)
    )
    return Message(role=Role.TOOL, content=(block,))
