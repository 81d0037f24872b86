"""OpenAIChatAdapter through the real ``openai`` SDK against the fake provider on loopback
(model-providers.md §2, §3; session-runtime.md §6)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from openwork_chat_state.messages import (
    DataBlock,
    FileIdSource,
    Message,
    Role,
    TextBlock,
    ToolCallBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolResultState,
    user_text,
)
from openwork_core.models.adapters.openai_chat import OpenAIChatAdapter
from openwork_core.models.port import (
    DeliveryState,
    FinishReason,
    ModelCallOptions,
    ModelErrorKind,
    ModelEvent,
    ModelRequest,
    ResponseCompleted,
    RetryHint,
    TokenUsage,
)
from openwork_core.session.compaction.policy import overflow_due
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import ErrorReply, Gate, Held, Reply, ToolCallSpec
from tests.integration.models.loopback import SYSTEM, completed, failure, outcome

READ_TOOL = ToolDefinition(
    name="read",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
)


def request(*messages: Message, tools: tuple[ToolDefinition, ...] = ()) -> ModelRequest:
    return ModelRequest(
        model="fake-model",
        messages=(SYSTEM, *messages) if messages else (SYSTEM, user_text("hi")),
        tools=tools,
        max_output_tokens=512,
    )


@pytest.fixture
async def adapter(fake: FakeProvider) -> AsyncIterator[OpenAIChatAdapter]:
    chat = OpenAIChatAdapter(base_url=fake.openai_base_url, api_key="sk-test")
    yield chat
    await chat.aclose()


async def collect(adapter: OpenAIChatAdapter, req: ModelRequest) -> list[ModelEvent]:
    events, error = await outcome(adapter, req)
    assert error is None
    return events


async def test_a_text_answer_streams_deltas_and_completes_with_stop(
    fake: FakeProvider, adapter: OpenAIChatAdapter
) -> None:
    """§2: text_start, text_delta…, text_end, response_completed; request is streamed with usage."""
    fake.push(Reply(text="Hello, world!"))
    events = await collect(adapter, request())
    kinds = [e.type for e in events]
    assert kinds[0] == "text_start"
    assert kinds[-2:] == ["text_end", "response_completed"]
    response = completed(events)
    assert response.text == "Hello, world!"
    assert response.finish_reason is FinishReason.STOP
    assert response.provider_request_id == "req_fake"
    body = fake.bodies[0]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 512
    assert "temperature" not in body
    assert "top_p" not in body
    assert fake.requests[0].headers["authorization"] == "Bearer sk-test"


async def test_a_tool_call_streams_its_arguments_and_finishes_with_tool_use(
    fake: FakeProvider, adapter: OpenAIChatAdapter
) -> None:
    """§2: tool_call_start (id + name), tool_call_delta per argument piece, tool_call_end."""
    fake.push(Reply(tool_calls=(ToolCallSpec("call_1", "read", {"path": "a.txt"}),)))
    events = await collect(adapter, request(tools=(READ_TOOL,)))
    deltas = [e.partial_input for e in events if e.type == "tool_call_delta"]
    assert len(deltas) > 1
    assert json.loads("".join(deltas)) == {"path": "a.txt"}
    response = completed(events)
    assert response.finish_reason is FinishReason.TOOL_USE
    assert response.tool_calls == (
        ToolCallBlock(id="call_1", name="read", input='{"path": "a.txt"}'),
    )
    tools = fake.bodies[0]["tools"]
    assert tools == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": READ_TOOL.parameters,
            },
        }
    ]


async def test_two_parallel_tool_calls_keep_their_order_and_arguments(
    fake: FakeProvider, adapter: OpenAIChatAdapter
) -> None:
    """§2: tool-call deltas are routed by index; both calls complete in provider order."""
    fake.push(
        Reply(
            tool_calls=(
                ToolCallSpec("call_a", "read", {"path": "a"}),
                ToolCallSpec("call_b", "read", ""),
            )
        )
    )
    response = completed(await collect(adapter, request(tools=(READ_TOOL,))))
    assert [(c.id, c.input) for c in response.tool_calls] == [
        ("call_a", '{"path": "a"}'),
        ("call_b", "{}"),
    ]


async def test_reasoning_content_becomes_reasoning_events_before_the_text(
    fake: FakeProvider, adapter: OpenAIChatAdapter
) -> None:
    """DeepSeek/vLLM ``delta.reasoning_content`` → reasoning_start/delta/end."""
    fake.push(Reply(reasoning="Let me think.", text="Done."))
    events = await collect(adapter, request())
    kinds = [e.type for e in events]
    assert kinds.index("reasoning_end") < kinds.index("text_start")
    response = completed(events)
    assert response.reasoning_text == "Let me think."
    assert response.text == "Done."


async def test_usage_maps_cached_and_reasoning_tokens(
    fake: FakeProvider, adapter: OpenAIChatAdapter
) -> None:
    """§2 TokenUsage: cached ⊂ input, reasoning ⊂ output."""
    fake.push(
        Reply(text="ok", input_tokens=100, output_tokens=20, cached_tokens=64, reasoning_tokens=5)
    )
    response = completed(await collect(adapter, request()))
    assert response.usage == TokenUsage(
        input_tokens=100,
        output_tokens=20,
        cached_input_tokens=64,
        reasoning_tokens=5,
    )


async def test_a_400_context_length_exceeded_is_a_context_overflow_before_output(
    fake: FakeProvider, adapter: OpenAIChatAdapter
) -> None:
    """§3: classified by provider code; the runtime may compact (no semantic output)."""
    fake.push(ErrorReply(status=400, code="context_length_exceeded", message="too long"))
    seen, error = await failure(adapter, request())
    assert seen == []
    assert error.kind is ModelErrorKind.CONTEXT_OVERFLOW
    assert error.delivery is DeliveryState.ACCEPTED_NO_SEMANTIC_OUTPUT
    assert error.retry is RetryHint.CALLER_DECISION
    assert error.http_status == 400
    assert error.provider_code == "context_length_exceeded"
    assert overflow_due(error)


async def test_a_429_with_retry_after_is_rate_limited_after_those_millis(
    fake: FakeProvider, adapter: OpenAIChatAdapter
) -> None:
    """§3: ``Retry-After`` seconds are honoured as after_millis."""
    fake.push(
        ErrorReply(
            status=429,
            code="rate_limit_exceeded",
            message="slow down",
            headers=(("Retry-After", "2"),),
        )
    )
    _, error = await failure(adapter, request())
    assert error.kind is ModelErrorKind.RATE_LIMITED
    assert error.retry is RetryHint.AFTER_MILLIS
    assert error.retry_after_ms == 2000
    assert error.provider_request_id == "req_fake_error"


async def test_a_stream_cut_after_some_text_fails_with_semantic_output_emitted(
    fake: FakeProvider, adapter: OpenAIChatAdapter
) -> None:
    """§2/§6: after the first text event, errors carry semantic_output_emitted."""
    fake.push(Reply(text="partial answer", ending="break"))
    seen, error = await failure(adapter, request())
    assert any(e.type == "text_delta" for e in seen)
    assert not any(isinstance(e, ResponseCompleted) for e in seen)
    assert error.kind is ModelErrorKind.NETWORK
    assert error.delivery is DeliveryState.SEMANTIC_OUTPUT_EMITTED
    assert not overflow_due(error)


async def test_a_stream_without_a_finish_reason_is_the_spec_network_error(
    fake: FakeProvider, adapter: OpenAIChatAdapter
) -> None:
    """§2: a stream ending without a terminal event → network error with the spec's text."""
    fake.push(Reply(text="half", ending="no_finish"))
    _, error = await failure(adapter, request())
    assert error.kind is ModelErrorKind.NETWORK
    assert error.message == "provider network error: Responses stream ended before a terminal event"
    assert error.delivery is DeliveryState.SEMANTIC_OUTPUT_EMITTED


async def test_tool_call_arguments_that_are_not_json_are_a_protocol_error(
    fake: FakeProvider, adapter: OpenAIChatAdapter
) -> None:
    """§2: input that is not valid JSON is a protocol error; the call never completes."""
    fake.push(Reply(tool_calls=(ToolCallSpec("call_1", "read", '{"path": "a'),)))
    seen, error = await failure(adapter, request(tools=(READ_TOOL,)))
    assert error.kind is ModelErrorKind.PROTOCOL_ERROR
    assert error.delivery is DeliveryState.SEMANTIC_OUTPUT_EMITTED
    assert not any(isinstance(e, ResponseCompleted) for e in seen)


async def test_an_error_object_inside_the_stream_is_classified_by_its_code(
    fake: FakeProvider, adapter: OpenAIChatAdapter
) -> None:
    """§3: mid-stream errors are classified like HTTP ones, phase stream_decode."""
    fake.push(Reply(ending="error_event", error_code="context_length_exceeded"))
    _, error = await failure(adapter, request())
    assert error.kind is ModelErrorKind.CONTEXT_OVERFLOW
    assert error.delivery is DeliveryState.ACCEPTED_NO_SEMANTIC_OUTPUT
    assert error.phase.value == "stream_decode"


async def test_a_server_silent_past_the_idle_timeout_is_a_timeout(
    fake: FakeProvider, adapter: OpenAIChatAdapter
) -> None:
    """§2: idle_timeout bounds the silence before and between chunks."""
    gate = Gate()
    fake.push(Held(Reply(text="late"), gate))
    options = ModelCallOptions(model_attempt_id="a", idle_timeout_s=0.3, max_transport_attempts=1)
    try:
        _, error = await failure(adapter, request(), options)
    finally:
        gate.release()
    assert error.kind is ModelErrorKind.TIMEOUT


async def test_a_tool_round_trip_is_encoded_as_assistant_tool_calls_then_tool_messages(
    fake: FakeProvider, adapter: OpenAIChatAdapter
) -> None:
    """§1: assistant tool_calls, then one role-tool message per result, in order."""
    fake.push(Reply(text="done"))
    history = (
        user_text("read both"),
        Message(
            role=Role.ASSISTANT,
            content=(
                ToolCallBlock(id="c1", name="read", input='{"path": "a"}'),
                ToolCallBlock(id="c2", name="read", input="{}"),
            ),
        ),
        Message(
            role=Role.TOOL,
            content=(
                ToolResultBlock(
                    id="c1",
                    name="read",
                    output=(TextBlock(text="A"),),
                    state=ToolResultState.SUCCESS,
                ),
            ),
        ),
        Message(
            role=Role.TOOL,
            content=(
                ToolResultBlock(
                    id="c2", name="read", output=(TextBlock(text="B"),), state=ToolResultState.ERROR
                ),
            ),
        ),
    )
    await collect(adapter, request(*history, tools=(READ_TOOL,)))
    messages = fake.bodies[0]["messages"]
    assert isinstance(messages, list)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool"]
    assert messages[2]["tool_calls"][1] == {
        "id": "c2",
        "type": "function",
        "function": {"name": "read", "arguments": "{}"},
    }
    assert messages[3] == {"role": "tool", "tool_call_id": "c1", "content": "A"}


async def test_a_request_that_cannot_be_encoded_fails_on_iteration_without_being_sent(
    fake: FakeProvider, adapter: OpenAIChatAdapter
) -> None:
    """§1/§3: a file_id source is an invalid request (request_encode, not_sent); nothing is sent."""
    data = DataBlock(source=FileIdSource(id="file-1"))
    _, error = await failure(adapter, request(Message(role=Role.USER, content=(data,))))
    assert error.kind is ModelErrorKind.INVALID_REQUEST
    assert error.delivery is DeliveryState.NOT_SENT
    assert fake.requests == []
