"""Chat Completions encoding and stream decoding, pure (model-providers.md §1, §2)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from openai.types.chat import ChatCompletionChunk

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
    ToolDefinition,
    UrlSource,
)
from openwork_core.models.adapters.openai_chat import ChatStreamDecoder, map_finish_reason
from openwork_core.models.adapters.openai_chat_encode import encode_messages, encode_tools
from openwork_core.models.port import (
    FinishReason,
    ModelError,
    ModelErrorKind,
    ModelEvent,
    ResponseCompleted,
)


def chunk(delta: Mapping[str, object], finish: str | None = None) -> dict[str, object]:
    """A chunk as the stream hands it over: the JSON object, valid as a ``ChatCompletionChunk``."""
    raw: dict[str, object] = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish}],
    }
    ChatCompletionChunk.model_validate(raw)
    return raw


def decode(*chunks: object) -> list[ModelEvent]:
    decoder = ChatStreamDecoder()
    events: list[ModelEvent] = []
    for item in chunks:
        events += decoder.feed(item)
    return events + decoder.finish()


def test_user_images_become_image_url_parts_and_text_only_stays_a_string() -> None:
    image = DataBlock(source=Base64Source(data="QUJD", media_type="image/png"))
    url = DataBlock(source=UrlSource(url="https://x/y.png", media_type="image/png"))
    encoded = encode_messages(
        [
            Message(role=Role.USER, content=(TextBlock(text="look"), image, url)),
            Message(role=Role.USER, content=(TextBlock(text="plain"),)),
        ]
    )
    assert encoded == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}},
                {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
            ],
        },
        {"role": "user", "content": "plain"},
    ]


def test_a_file_id_source_is_an_invalid_request_before_sending() -> None:
    message = Message(role=Role.USER, content=(DataBlock(source=FileIdSource(id="file-1")),))
    with pytest.raises(ModelError) as caught:
        encode_messages([message])
    assert caught.value.kind is ModelErrorKind.INVALID_REQUEST
    assert caught.value.delivery.value == "not_sent"


def test_thinking_and_opaque_blocks_are_dropped_from_assistant_messages() -> None:
    message = Message(
        role=Role.ASSISTANT,
        content=(
            ThinkingBlock(thinking="secret"),
            ProviderOpaqueBlock(driver="anthropic", kind="thinking", payload={"s": 1}),
            TextBlock(text="answer"),
            ToolCallBlock(id="c1", name="read", input=""),
        ),
    )
    assert encode_messages([message]) == [
        {
            "role": "assistant",
            "content": "answer",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
            ],
        }
    ]


def test_a_tool_without_a_schema_gets_an_empty_object_schema() -> None:
    [tool] = encode_tools([ToolDefinition(name="now", description="the time")])
    assert tool["function"]["parameters"] == {"type": "object", "properties": {}}


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("stop", FinishReason.STOP),
        ("length", FinishReason.LENGTH),
        ("tool_calls", FinishReason.TOOL_USE),
        ("content_filter", FinishReason.CONTENT_FILTER),
        ("insufficient_system_resource", FinishReason.UNKNOWN),
    ],
)
def test_finish_reasons_map_to_the_neutral_enum(raw: str, reason: FinishReason) -> None:
    assert map_finish_reason(raw) is reason


def test_tool_call_deltas_are_routed_by_index() -> None:
    events = decode(
        chunk(
            {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": ""}}]}
        ),
        chunk(
            {"tool_calls": [{"index": 1, "id": "b", "function": {"name": "g", "arguments": "{"}}]}
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"x": 1}'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": "}"}}]}),
        chunk({}, "tool_calls"),
    )
    final = events[-1]
    assert isinstance(final, ResponseCompleted)
    assert [(c.id, c.name, c.input) for c in final.response.tool_calls] == [
        ("a", "f", '{"x": 1}'),
        ("b", "g", "{}"),
    ]


def test_stop_with_tool_calls_is_reported_as_tool_use() -> None:
    """Some servers (Ollama) finish a tool-calling response with ``stop``."""
    events = decode(
        chunk({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f"}}]}),
        chunk({}, "stop"),
    )
    final = events[-1]
    assert isinstance(final, ResponseCompleted)
    assert final.response.finish_reason is FinishReason.TOOL_USE
    assert final.response.raw_finish_reason == "stop"


def test_a_tool_call_without_a_name_is_a_protocol_error() -> None:
    with pytest.raises(ModelError) as caught:
        decode(chunk({"tool_calls": [{"index": 0, "id": "a", "function": {"arguments": "{}"}}]}))
    assert caught.value.kind is ModelErrorKind.PROTOCOL_ERROR


def test_the_end_of_a_stream_without_finish_reason_is_a_network_error() -> None:
    with pytest.raises(ModelError) as caught:
        decode(chunk({"content": "hi"}))
    assert caught.value.message == (
        "provider network error: Responses stream ended before a terminal event"
    )


def test_reasoning_field_variants_are_both_read() -> None:
    events = decode(chunk({"reasoning_content": "a"}), chunk({"reasoning": "b"}), chunk({}, "stop"))
    final = events[-1]
    assert isinstance(final, ResponseCompleted)
    assert final.response.reasoning_text == "ab"


def test_usage_and_ids_are_read_from_the_chunk_objects_and_wrong_types_count_as_absent() -> None:
    """The decoder reads the JSON objects the stream yields (no SDK model per chunk); a field of
    the wrong type is absent, as with the SDK's lenient construction."""
    usage = {
        "prompt_tokens": 120,
        "completion_tokens": 8,
        "total_tokens": 128,
        "prompt_tokens_details": {"cached_tokens": 100},
        "completion_tokens_details": {"reasoning_tokens": True},
    }
    tail = {"id": "c1", "model": "m", "choices": [], "usage": usage}
    decoder = ChatStreamDecoder()
    events = [
        *decoder.feed({"id": "", "model": 7, "choices": "not a list"}),
        *decoder.feed(chunk({"content": "hi", "tool_calls": None}, "stop")),
        *decoder.feed(tail),
        *decoder.finish(),
    ]
    final = events[-1]
    assert isinstance(final, ResponseCompleted)
    response = final.response
    assert (response.text, response.response_id, response.model) == ("hi", "c1", "m")
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.cached_input_tokens) == (120, 100)
    assert response.usage.reasoning_tokens is None
