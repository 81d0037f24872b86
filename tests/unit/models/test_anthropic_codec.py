"""Anthropic Messages encoding, pure (model-providers.md §1, §5)."""

from __future__ import annotations

import pytest

from openwork_chat_state.messages import (
    Base64Source,
    DataBlock,
    FileIdSource,
    Message,
    ProviderOpaqueBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
    user_text,
)
from openwork_core.models.adapters.anthropic import map_stop_reason
from openwork_core.models.adapters.anthropic_encode import (
    encode_messages,
    encode_system,
    encode_thinking,
)
from openwork_core.models.adapters.opaque import OpaqueScope
from openwork_core.models.port import FinishReason, ModelError, ModelErrorKind, ThinkingConfig


def result(call_id: str) -> Message:
    block = ToolResultBlock(
        id=call_id, name="f", output=(TextBlock(text="r"),), state=ToolResultState.SUCCESS
    )
    return Message(role=Role.TOOL, content=(block,))


def test_system_parts_go_to_the_system_parameter_and_not_into_messages() -> None:
    messages = [Message(role=Role.SYSTEM, content=(TextBlock(text="a"),)), user_text("hi")]
    assert encode_system(messages) == [{"type": "text", "text": "a"}]
    assert encode_messages(messages) == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    ]


def test_a_user_message_after_tool_results_joins_them_with_the_results_first() -> None:
    call = Message(role=Role.ASSISTANT, content=(ToolCallBlock(id="t1", name="f", input="{}"),))
    encoded = encode_messages([user_text("go"), call, result("t1"), user_text("notice")])
    assert [m["role"] for m in encoded] == ["user", "assistant", "user"]
    assert [b["type"] for b in encoded[2]["content"]] == ["tool_result", "text"]


def test_unsigned_thinking_and_foreign_opaque_blocks_are_dropped() -> None:
    message = Message(
        role=Role.ASSISTANT,
        content=(
            ThinkingBlock(thinking="plain"),
            ProviderOpaqueBlock(driver="openai-responses", kind="reasoning", payload={}),
            ProviderOpaqueBlock(
                driver="anthropic",
                kind="redacted_thinking",
                payload={"endpoint": "http://a", "model": "m", "data": "x"},
            ),
            TextBlock(text="answer"),
        ),
    )
    assert encode_messages([message], OpaqueScope(endpoint="http://a", model="m")) == [
        {
            "role": "assistant",
            "content": [
                {"type": "redacted_thinking", "data": "x"},
                {"type": "text", "text": "answer"},
            ],
        }
    ]


def test_images_and_pdfs_are_sent_and_file_ids_are_refused() -> None:
    png = DataBlock(source=Base64Source(data="QQ==", media_type="image/png"))
    pdf = DataBlock(source=Base64Source(data="QQ==", media_type="application/pdf"))
    [message] = encode_messages([Message(role=Role.USER, content=(png, pdf))])
    assert [b["type"] for b in message["content"]] == ["image", "document"]
    with pytest.raises(ModelError) as caught:
        encode_messages(
            [Message(role=Role.USER, content=(DataBlock(source=FileIdSource(id="f")),))]
        )
    assert caught.value.kind is ModelErrorKind.INVALID_REQUEST


def test_tool_call_input_that_is_not_an_object_is_an_invalid_request() -> None:
    call = Message(role=Role.ASSISTANT, content=(ToolCallBlock(id="t", name="f", input="[1]"),))
    with pytest.raises(ModelError):
        encode_messages([call])


def test_thinking_enabled_gets_half_the_output_budget() -> None:
    assert encode_thinking(ThinkingConfig(mode="enabled"), 16_000) == {
        "type": "enabled",
        "budget_tokens": 8_000,
    }
    assert encode_thinking(ThinkingConfig(mode="enabled"), 1_000) is None
    assert encode_thinking(ThinkingConfig(mode="disabled"), 1_000) == {"type": "disabled"}
    assert encode_thinking(None, 1_000) is None


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("end_turn", FinishReason.STOP),
        ("max_tokens", FinishReason.LENGTH),
        ("tool_use", FinishReason.TOOL_USE),
        ("refusal", FinishReason.REFUSAL),
        ("pause_turn", FinishReason.INCOMPLETE),
        ("something_new", FinishReason.UNKNOWN),
    ],
)
def test_stop_reasons_map_to_the_neutral_enum(raw: str, reason: FinishReason) -> None:
    assert map_stop_reason(raw) is reason
