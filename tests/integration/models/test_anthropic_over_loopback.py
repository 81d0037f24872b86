"""AnthropicAdapter through the real ``anthropic`` SDK against the fake provider on loopback
(model-providers.md §1-§3, §5; session-runtime.md §6)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from openwork_chat_state.messages import (
    Message,
    ProviderOpaqueBlock,
    Role,
    TextBlock,
    ToolCallBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolResultState,
    user_text,
)
from openwork_core.models.adapters.anthropic import AnthropicAdapter
from openwork_core.models.port import (
    DeliveryState,
    FinishReason,
    ModelErrorKind,
    ModelRequest,
    ResponseCompleted,
    RetryHint,
)
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import ErrorReply, Reply, ToolCallSpec
from tests.integration.models.loopback import SYSTEM, completed, outcome

READ_TOOL = ToolDefinition(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
)


def request(*messages: Message) -> ModelRequest:
    return ModelRequest(
        model="claude-fake",
        messages=(SYSTEM, *(messages or (user_text("hi"),))),
        tools=(READ_TOOL,),
        max_output_tokens=1000,
    )


@pytest.fixture
async def adapter(fake: FakeProvider) -> AsyncIterator[AnthropicAdapter]:
    port = AnthropicAdapter(base_url=fake.anthropic_base_url, api_key="sk-ant-test")
    yield port
    await port.aclose()


async def test_a_text_answer_streams_and_completes_with_usage(
    fake: FakeProvider, adapter: AnthropicAdapter
) -> None:
    fake.push(Reply(text="Hello there", input_tokens=30, output_tokens=4, cached_tokens=20))
    events, error = await outcome(adapter, request())
    assert error is None
    response = completed(events)
    assert response.text == "Hello there"
    assert response.finish_reason is FinishReason.STOP
    assert response.usage is not None
    assert response.usage.input_tokens == 50  # uncached 30 + cache read 20
    assert response.usage.cached_input_tokens == 20
    assert response.usage.output_tokens == 4
    body = fake.bodies[0]
    assert body["system"] == [
        {"type": "text", "text": "You are a test.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["max_tokens"] == 1000
    assert body["stream"] is True
    assert "temperature" not in body
    headers = fake.requests[0].headers  # this SDK version sends the key as a bearer token
    assert "sk-ant-test" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])


async def test_a_tool_call_streams_input_json_and_finishes_with_tool_use(
    fake: FakeProvider, adapter: AnthropicAdapter
) -> None:
    fake.push(
        Reply(
            text="Reading.",
            tool_calls=(
                ToolCallSpec("toolu_1", "read", {"path": "a"}),
                ToolCallSpec("toolu_2", "read", ""),
            ),
        )
    )
    events, error = await outcome(adapter, request())
    assert error is None
    response = completed(events)
    assert response.finish_reason is FinishReason.TOOL_USE
    assert [(c.id, c.input) for c in response.tool_calls] == [
        ("toolu_1", '{"path": "a"}'),
        ("toolu_2", "{}"),
    ]
    assert [e.type for e in events].count("tool_call_end") == 2


async def test_signed_thinking_comes_back_as_reasoning_and_a_provider_opaque_block(
    fake: FakeProvider, adapter: AnthropicAdapter
) -> None:
    """§5: signed thinking round-trips as provider-opaque blocks of driver ``anthropic``."""
    fake.push(Reply(reasoning="Think.", reasoning_signature="sig-1", text="ok"))
    events, _ = await outcome(adapter, request())
    response = completed(events)
    assert response.reasoning_text == "Think."
    assert response.provider_opaque_blocks == (
        ProviderOpaqueBlock(
            driver="anthropic",
            kind="thinking",
            payload={
                "endpoint": fake.anthropic_base_url,
                "model": "claude-fake",
                "thinking": "Think.",
                "signature": "sig-1",
            },
        ),
    )


async def test_tool_results_merge_into_one_user_message_after_the_tool_use(
    fake: FakeProvider, adapter: AnthropicAdapter
) -> None:
    """§1: consecutive tool messages become one user message of ``tool_result`` blocks."""
    fake.push(Reply(text="done"))

    def result(call_id: str, state: ToolResultState) -> Message:
        block = ToolResultBlock(
            id=call_id, name="read", output=(TextBlock(text=call_id),), state=state
        )
        return Message(role=Role.TOOL, content=(block,))

    opaque = ProviderOpaqueBlock(
        driver="anthropic",
        kind="thinking",
        payload={
            "endpoint": fake.anthropic_base_url,
            "model": "claude-fake",
            "thinking": "t",
            "signature": "s",
        },
    )
    history = (
        user_text("read"),
        Message(
            role=Role.ASSISTANT,
            content=(
                opaque,
                ToolCallBlock(id="t1", name="read", input='{"path": "a"}'),
                ToolCallBlock(id="t2", name="read", input="{}"),
            ),
        ),
        result("t1", ToolResultState.SUCCESS),
        result("t2", ToolResultState.ERROR),
    )
    _, error = await outcome(adapter, request(*history))
    assert error is None
    messages = fake.bodies[0]["messages"]
    assert isinstance(messages, list)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"][0] == {"type": "thinking", "thinking": "t", "signature": "s"}
    assert messages[1]["content"][1]["input"] == {"path": "a"}
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "t1"}]},
        {
            "type": "tool_result",
            "tool_use_id": "t2",
            "content": [{"type": "text", "text": "t2"}],
            "is_error": True,
            "cache_control": {"type": "ephemeral"},
        },
    ]


async def test_an_overloaded_529_is_overloaded_with_backoff(
    fake: FakeProvider, adapter: AnthropicAdapter
) -> None:
    """§3: classified by ``error.type``; no output was produced."""
    fake.push(ErrorReply(status=529, code="overloaded_error", message="Overloaded"))
    events, error = await outcome(adapter, request())
    assert events == []
    assert error is not None
    assert error.kind is ModelErrorKind.OVERLOADED
    assert error.retry is RetryHint.BACKOFF
    assert error.delivery is DeliveryState.ACCEPTED_NO_SEMANTIC_OUTPUT


async def test_a_429_rate_limit_honours_retry_after(
    fake: FakeProvider, adapter: AnthropicAdapter
) -> None:
    fake.push(ErrorReply(status=429, code="rate_limit_error", headers=(("retry-after-ms", "250"),)))
    _, error = await outcome(adapter, request())
    assert error is not None
    assert error.kind is ModelErrorKind.RATE_LIMITED
    assert error.retry_after_ms == 250


async def test_an_error_event_after_text_carries_semantic_output_emitted(
    fake: FakeProvider, adapter: AnthropicAdapter
) -> None:
    fake.push(Reply(text="partial", ending="error_event", error_code="overloaded_error"))
    events, error = await outcome(adapter, request())
    assert any(e.type == "text_delta" for e in events)
    assert error is not None
    assert error.kind is ModelErrorKind.OVERLOADED
    assert error.delivery is DeliveryState.SEMANTIC_OUTPUT_EMITTED


async def test_a_cut_stream_is_a_network_error_after_output(
    fake: FakeProvider, adapter: AnthropicAdapter
) -> None:
    fake.push(Reply(text="partial", ending="break"))
    _, error = await outcome(adapter, request())
    assert error is not None
    assert error.kind is ModelErrorKind.NETWORK
    assert error.delivery is DeliveryState.SEMANTIC_OUTPUT_EMITTED


async def test_a_stream_without_message_stop_is_the_spec_network_error(
    fake: FakeProvider, adapter: AnthropicAdapter
) -> None:
    fake.push(Reply(text="half", ending="no_finish"))
    _, error = await outcome(adapter, request())
    assert error is not None
    assert error.message == "provider network error: Responses stream ended before a terminal event"


async def test_invalid_tool_input_json_is_a_protocol_error(
    fake: FakeProvider, adapter: AnthropicAdapter
) -> None:
    fake.push(Reply(tool_calls=(ToolCallSpec("toolu_1", "read", '{"path": '),)))
    events, error = await outcome(adapter, request())
    assert error is not None
    assert error.kind is ModelErrorKind.PROTOCOL_ERROR
    assert not any(isinstance(e, ResponseCompleted) for e in events)
