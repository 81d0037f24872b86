"""Reasoning kept between calls (issue 14 points 3 and 10), each adapter through its real SDK over
loopback against the fake provider speaking its protocol, streaming.

model-providers.md §1: a provider-opaque block goes back only to the driver that made it — here
the same endpoint and the same model; the fake's wire invariants additionally reject any
Responses input item with an ``id`` under ``store: false`` and any reasoning item without its
encrypted content.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence

import orjson
import pytest

from openwork_chat_state.messages import (
    Message,
    ProviderOpaqueBlock,
    Role,
    TextBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolResultState,
    user_text,
)
from openwork_core.context.wire import json_size
from openwork_core.models.adapters.anthropic import AnthropicAdapter
from openwork_core.models.adapters.openai_responses import OpenAIResponsesAdapter
from openwork_core.models.port import ModelErrorKind, ModelRequest, ModelResponse
from openwork_core.session.runner.model_step import assistant_message
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import ErrorReply, Reply, ToolCallSpec
from tests.integration.models.loopback import SYSTEM, completed, outcome

READ_TOOL = ToolDefinition(name="read", description="Read a file")


def request(model: str, *messages: Message) -> ModelRequest:
    return ModelRequest(
        model=model,
        messages=(SYSTEM, *(messages or (user_text("hi"),))),
        tools=(READ_TOOL,),
        max_output_tokens=1024,
    )


def tool_round(response: ModelResponse) -> tuple[Message, ...]:
    """The history after the first call: the question, the assistant message as the runner stores
    it (``assistant_message``), the tool result."""
    call = response.tool_calls[0]
    result = ToolResultBlock(
        id=call.id, name=call.name, output=(TextBlock(text="A"),), state=ToolResultState.SUCCESS
    )
    return (
        user_text("read a"),
        assistant_message(response),
        Message(role=Role.TOOL, content=(result,)),
    )


def input_items(body: Mapping[str, object]) -> list[Mapping[str, object]]:
    items = body["input"]
    assert isinstance(items, list)
    return items


def reasoning_items(body: Mapping[str, object]) -> list[Mapping[str, object]]:
    return [i for i in input_items(body) if i.get("type") == "reasoning"]


@pytest.fixture
async def responses(fake: FakeProvider) -> AsyncIterator[OpenAIResponsesAdapter]:
    port = OpenAIResponsesAdapter(base_url=fake.openai_base_url, api_key="sk-test")
    yield port
    await port.aclose()


@pytest.fixture
async def anthropic(fake: FakeProvider) -> AsyncIterator[AnthropicAdapter]:
    port = AnthropicAdapter(base_url=fake.anthropic_base_url, api_key="sk-ant-test")
    yield port
    await port.aclose()


async def first_responses_call(
    fake: FakeProvider, port: OpenAIResponsesAdapter, model: str = "gpt-fake"
) -> ModelResponse:
    fake.push(
        Reply(
            reasoning="look at a",
            reasoning_encrypted="enc-1",
            tool_calls=(ToolCallSpec("call_1", "read", {"path": "a"}),),
        )
    )
    events, error = await outcome(port, request(model, user_text("read a")))
    assert error is None
    return completed(events)


# -- OpenAI Responses -----------------------------------------------------------------------------
async def test_responses_ask_for_encrypted_reasoning_and_keep_it_as_an_opaque_block(
    fake: FakeProvider, responses: OpenAIResponsesAdapter
) -> None:
    """Issue 14 point 3: ``store: false`` + ``include: ["reasoning.encrypted_content"]``; the
    reasoning item becomes a provider-opaque block of driver ``openai-responses`` scoped to the
    endpoint and the requested model."""
    response = await first_responses_call(fake, responses)
    body = fake.bodies[0]
    assert body["store"] is False
    assert body["include"] == ["reasoning.encrypted_content"]
    assert response.provider_opaque_blocks == (
        ProviderOpaqueBlock(
            driver="openai-responses",
            kind="reasoning",
            payload={
                "endpoint": f"{fake.openai_base_url}/",
                "model": "gpt-fake",
                "summary": ["look at a"],
                "encrypted_content": "enc-1",
            },
        ),
    )


async def test_encrypted_reasoning_goes_back_to_the_same_model_before_its_call_without_ids(
    fake: FakeProvider, responses: OpenAIResponsesAdapter
) -> None:
    """Points 3 and 10: the next call of the same endpoint and model carries the reasoning item
    right before its function call, with no ``id`` (the fake rejects ids under store false)."""
    history = tool_round(await first_responses_call(fake, responses))
    fake.push(Reply(text="done"))
    _, error = await outcome(responses, request("gpt-fake", *history))
    assert error is None
    items = input_items(fake.bodies[1])
    kinds = [i.get("type", "message") for i in items]
    assert kinds == ["message", "message", "reasoning", "function_call", "function_call_output"]
    assert items[2] == {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "look at a"}],
        "encrypted_content": "enc-1",
    }
    assert not any("id" in item for item in items)


async def test_encrypted_reasoning_is_dropped_after_a_model_switch(
    fake: FakeProvider, responses: OpenAIResponsesAdapter
) -> None:
    """Points 3 and 10: another model never sees the reasoning of the first."""
    history = tool_round(await first_responses_call(fake, responses))
    fake.push(Reply(text="done"))
    _, error = await outcome(responses, request("gpt-other", *history))
    assert error is None
    assert reasoning_items(fake.bodies[1]) == []
    assert [i.get("type") for i in input_items(fake.bodies[1])][-2:] == [
        "function_call",
        "function_call_output",
    ]


async def test_encrypted_reasoning_is_dropped_for_another_endpoint(fake: FakeProvider) -> None:
    """Point 3: a provider switch (another base URL, same model name) drops it too."""
    first = OpenAIResponsesAdapter(base_url=fake.openai_base_url, api_key="k")
    other = OpenAIResponsesAdapter(base_url=f"http://localhost:{fake.port}/v1", api_key="k")
    try:
        history = tool_round(await first_responses_call(fake, first))
        fake.push(Reply(text="done"))
        _, error = await outcome(other, request("gpt-fake", *history))
        assert error is None
        assert reasoning_items(fake.bodies[1]) == []
    finally:
        await first.aclose()
        await other.aclose()


async def test_invalid_encrypted_content_drops_the_reasoning_and_resubmits_once(
    fake: FakeProvider, responses: OpenAIResponsesAdapter
) -> None:
    """Point 10: the server's ``invalid_encrypted_content`` refusal (before any output) is
    answered by one resubmission without reasoning items, not a failed call."""
    history = tool_round(await first_responses_call(fake, responses))
    fake.push(
        ErrorReply(status=400, code="invalid_encrypted_content", message="cannot decrypt"),
        Reply(text="done"),
    )
    events, error = await outcome(responses, request("gpt-fake", *history))
    assert error is None
    assert completed(events).text == "done"
    assert len(fake.bodies) == 3
    assert len(reasoning_items(fake.bodies[1])) == 1
    assert reasoning_items(fake.bodies[2]) == []
    assert input_items(fake.bodies[2]) == [
        i for i in input_items(fake.bodies[1]) if i.get("type") != "reasoning"
    ]


async def test_invalid_encrypted_content_without_reasoning_items_is_not_resubmitted(
    fake: FakeProvider, responses: OpenAIResponsesAdapter
) -> None:
    """Point 10: only a request that carried reasoning is resubmitted; otherwise the error
    stands (and is classified as usual)."""
    fake.push(ErrorReply(status=400, code="invalid_encrypted_content", message="cannot decrypt"))
    _, error = await outcome(responses, request("gpt-fake"))
    assert error is not None
    assert error.kind is ModelErrorKind.INVALID_REQUEST
    assert len(fake.bodies) == 1


async def test_a_second_invalid_encrypted_content_fails_the_call(
    fake: FakeProvider, responses: OpenAIResponsesAdapter
) -> None:
    """Point 10: resubmitted once, never in a loop."""
    history = tool_round(await first_responses_call(fake, responses))
    refusal = ErrorReply(status=400, code="invalid_encrypted_content", message="cannot decrypt")
    fake.push(refusal, refusal)
    _, error = await outcome(responses, request("gpt-fake", *history))
    assert error is not None
    assert error.provider_code == "invalid_encrypted_content"
    assert len(fake.bodies) == 3


# -- Anthropic ------------------------------------------------------------------------------------
async def first_anthropic_call(fake: FakeProvider, port: AnthropicAdapter) -> ModelResponse:
    fake.push(
        Reply(
            reasoning="look at a",
            reasoning_signature="sig-1",
            tool_calls=(ToolCallSpec("t1", "read", {"path": "a"}),),
        )
    )
    events, error = await outcome(port, request("claude-fake", user_text("read a")))
    assert error is None
    return completed(events)


def assistant_blocks(body: Mapping[str, object]) -> Sequence[Mapping[str, object]]:
    messages = body["messages"]
    assert isinstance(messages, list)
    content = messages[1]["content"]
    assert isinstance(content, list)
    return content


async def test_signed_thinking_goes_back_first_in_its_assistant_message_to_the_same_model(
    fake: FakeProvider, anthropic: AnthropicAdapter
) -> None:
    """Point 3: the thinking block with its signature precedes the tool use it led to."""
    history = tool_round(await first_anthropic_call(fake, anthropic))
    fake.push(Reply(text="done"))
    _, error = await outcome(anthropic, request("claude-fake", *history))
    assert error is None
    blocks = assistant_blocks(fake.bodies[1])
    assert blocks[0] == {"type": "thinking", "thinking": "look at a", "signature": "sig-1"}
    assert [b["type"] for b in blocks] == ["thinking", "tool_use"]


async def test_signed_thinking_is_dropped_for_another_model(
    fake: FakeProvider, anthropic: AnthropicAdapter
) -> None:
    history = tool_round(await first_anthropic_call(fake, anthropic))
    fake.push(Reply(text="done"))
    _, error = await outcome(anthropic, request("claude-other", *history))
    assert error is None
    assert [b["type"] for b in assistant_blocks(fake.bodies[1])] == ["tool_use"]


async def test_the_budget_measures_the_request_copy_with_its_opaque_blocks(
    fake: FakeProvider, responses: OpenAIResponsesAdapter
) -> None:
    """Point 3: the kept reasoning is part of the stored assistant message, so the context
    engine's byte metric (compact JSON of the request copy) counts it; the adapter sends no more
    reasoning than the copy holds and leaves the copy itself untouched."""
    history = tool_round(await first_responses_call(fake, responses))
    req = request("gpt-fake", *history)
    before = orjson.dumps(req)
    fake.push(Reply(text="done"))
    _, error = await outcome(responses, req)
    assert error is None
    assert orjson.dumps(req) == before
    assert reasoning_items(fake.bodies[1])[0]["encrypted_content"] == "enc-1"
    stored = history[1]
    (opaque,) = [b for b in stored.content if isinstance(b, ProviderOpaqueBlock)]
    rest = tuple(b for b in stored.content if b is not opaque)
    without = Message(role=Role.ASSISTANT, content=rest)
    assert json_size(stored) == json_size(without) + json_size(opaque) + 1  # one comma
