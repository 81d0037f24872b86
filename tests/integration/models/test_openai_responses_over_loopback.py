"""OpenAIResponsesAdapter through the real ``openai`` SDK against the fake provider's
``/v1/responses`` endpoint (model-providers.md §2, §3, §5)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from openwork_chat_state.messages import (
    Message,
    Role,
    TextBlock,
    ToolCallBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolResultState,
    user_text,
)
from openwork_core.models.adapters.openai_responses import OpenAIResponsesAdapter
from openwork_core.models.port import (
    DeliveryState,
    FinishReason,
    ModelErrorKind,
    ModelRequest,
    TokenUsage,
)
from openwork_core.session.compaction.policy import overflow_due
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import ErrorReply, Reply, ToolCallSpec
from tests.integration.models.loopback import SYSTEM, completed, outcome

READ_TOOL = ToolDefinition(name="read", description="Read a file")


def request(*messages: Message) -> ModelRequest:
    return ModelRequest(
        model="gpt-fake",
        messages=(SYSTEM, *(messages or (user_text("hi"),))),
        tools=(READ_TOOL,),
        max_output_tokens=2048,
    )


@pytest.fixture
async def adapter(fake: FakeProvider) -> AsyncIterator[OpenAIResponsesAdapter]:
    port = OpenAIResponsesAdapter(base_url=fake.openai_base_url, api_key="sk-test")
    yield port
    await port.aclose()


async def test_reasoning_text_and_usage_arrive_through_the_responses_stream(
    fake: FakeProvider, adapter: OpenAIResponsesAdapter
) -> None:
    fake.push(
        Reply(
            reasoning="hmm",
            text="Hello",
            input_tokens=40,
            output_tokens=9,
            cached_tokens=32,
            reasoning_tokens=3,
        )
    )
    events, error = await outcome(adapter, request())
    assert error is None
    response = completed(events)
    assert (response.reasoning_text, response.text) == ("hmm", "Hello")
    assert response.finish_reason is FinishReason.STOP
    assert response.response_id == "resp_fake"
    assert response.usage == TokenUsage(
        input_tokens=40,
        output_tokens=9,
        cached_input_tokens=32,
        reasoning_tokens=3,
    )
    body = fake.bodies[0]
    assert body["stream"] is True
    assert body["max_output_tokens"] == 2048
    assert body["input"] == [
        {"type": "message", "role": "system", "content": "You are a test."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    ]


async def test_function_calls_complete_with_tool_use(
    fake: FakeProvider, adapter: OpenAIResponsesAdapter
) -> None:
    fake.push(
        Reply(tool_calls=(ToolCallSpec("call_1", "read", {"p": 1}), ToolCallSpec("call_2", "read")))
    )
    events, error = await outcome(adapter, request())
    assert error is None
    response = completed(events)
    assert response.finish_reason is FinishReason.TOOL_USE
    assert [(c.id, c.input) for c in response.tool_calls] == [
        ("call_1", '{"p": 1}'),
        ("call_2", "{}"),
    ]


async def test_tool_results_are_function_call_outputs_after_their_calls(
    fake: FakeProvider, adapter: OpenAIResponsesAdapter
) -> None:
    fake.push(Reply(text="ok"))
    result = ToolResultBlock(
        id="c1", name="read", output=(TextBlock(text="A"),), state=ToolResultState.SUCCESS
    )
    history = (
        user_text("go"),
        Message(
            role=Role.ASSISTANT,
            content=(TextBlock(text="reading"), ToolCallBlock(id="c1", name="read", input="{}")),
        ),
        Message(role=Role.TOOL, content=(result,)),
    )
    _, error = await outcome(adapter, request(*history))
    assert error is None
    assert fake.bodies[0]["input"][2:] == [
        {"type": "message", "role": "assistant", "content": "reading"},
        {"type": "function_call", "call_id": "c1", "name": "read", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "A"},
    ]


async def test_an_incomplete_response_for_max_output_tokens_finishes_with_length(
    fake: FakeProvider, adapter: OpenAIResponsesAdapter
) -> None:
    fake.push(Reply(text="trunc", finish="max_output_tokens"))
    events, _ = await outcome(adapter, request())
    response = completed(events)
    assert response.finish_reason is FinishReason.LENGTH
    assert response.raw_finish_reason == "max_output_tokens"


async def test_response_failed_with_context_length_exceeded_is_an_overflow_before_output(
    fake: FakeProvider, adapter: OpenAIResponsesAdapter
) -> None:
    """§3: ``response.failed`` is classified by ``response.error.code``."""
    fake.push(Reply(ending="error_event", error_code="context_length_exceeded"))
    events, error = await outcome(adapter, request())
    assert events == []
    assert error is not None
    assert error.kind is ModelErrorKind.CONTEXT_OVERFLOW
    assert overflow_due(error)


async def test_an_http_400_overflow_and_a_missing_terminal_event(
    fake: FakeProvider, adapter: OpenAIResponsesAdapter
) -> None:
    fake.push(
        ErrorReply(status=400, code="context_length_exceeded"),
        Reply(text="half", ending="no_finish"),
    )
    _, overflow = await outcome(adapter, request())
    assert overflow is not None
    assert overflow.kind is ModelErrorKind.CONTEXT_OVERFLOW
    _, early = await outcome(adapter, request())
    assert early is not None
    assert early.message == "provider network error: Responses stream ended before a terminal event"
    assert early.delivery is DeliveryState.SEMANTIC_OUTPUT_EMITTED
