"""The adapters send an orjson-preserialized body through the SDKs' low-level ``post``
(issue 13 §1; model-providers.md §2): the bytes on the wire are the ones the SDK's typed
``create`` sent before, byte for byte, and one orjson dump of the encoder's output; retries
re-send the same bytes; a body JSON cannot carry is ``invalid_request`` before any I/O."""

from __future__ import annotations

from dataclasses import replace

import anthropic
import openai
import orjson

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
from openwork_core.models.adapters import anthropic_encode, openai_chat_encode
from openwork_core.models.adapters import openai_responses_encode as responses_encode
from openwork_core.models.adapters.anthropic import AnthropicAdapter
from openwork_core.models.adapters.openai_chat import OpenAIChatAdapter
from openwork_core.models.adapters.openai_responses import OpenAIResponsesAdapter
from openwork_core.models.port import (
    DeliveryState,
    ModelCallOptions,
    ModelErrorKind,
    ModelRequest,
    ThinkingConfig,
)
from tests.fakes.fake_provider import FakeProvider, RecordedRequest
from tests.fakes.fake_script import ErrorReply, Reply
from tests.integration.models.loopback import OPTIONS, SYSTEM, completed, failure, outcome

TOOLS = (
    ToolDefinition(
        name="read",
        description="Read a file — «quoted» ünïcode",
        parameters={"type": "object", "properties": {"path": {"type": "string"}}},
    ),
)
HISTORY = (
    SYSTEM,
    user_text('read "main.py" ünïcode 日本語 \u2028 and a tab\t'),
    Message(
        role=Role.ASSISTANT,
        content=(
            TextBlock(text="Reading it."),
            ToolCallBlock(id="call_1", name="read", input='{"path": "main.py"}'),
        ),
    ),
    Message(
        role=Role.TOOL,
        content=(
            ToolResultBlock(
                id="call_1",
                name="read",
                output=(TextBlock(text="print('héllo')\n" * 20),),
                state=ToolResultState.SUCCESS,
            ),
        ),
    ),
    user_text("now explain"),
)
REQUEST = ModelRequest(
    model="fake-model",
    messages=HISTORY,
    tools=TOOLS,
    max_output_tokens=4096,
    temperature=0.25,
    top_p=0.9,
)


SESSION_OPTIONS = replace(OPTIONS, session_id="ses_preserialized")
"""With a session id: the OpenAI protocols send it as ``prompt_cache_key``."""


def _headers(request: RecordedRequest) -> dict[str, str]:
    """The request's headers but the read timeout (the adapter sets its own)."""
    return {k: v for k, v in request.headers.items() if k != "x-stainless-read-timeout"}


async def _drain_openai(stream: openai.AsyncStream[object]) -> None:
    async for _ in stream:
        pass


async def test_chat_body_is_byte_for_byte_what_the_sdk_create_sent() -> None:
    """issue 13 §1: the same bytes as the typed ``chat.completions.create`` path, which are one
    orjson dump of the encoder's output."""
    with FakeProvider([Reply(text="a"), Reply(text="b")]) as fake:
        adapter = OpenAIChatAdapter(
            base_url=fake.openai_base_url, api_key="sk-test", reasoning_effort="low"
        )
        completed((await outcome(adapter, REQUEST, SESSION_OPTIONS))[0])
        await adapter.aclose()
        sdk = openai.AsyncOpenAI(base_url=fake.openai_base_url, api_key="sk-test")
        stream = await sdk.chat.completions.create(
            model="fake-model",
            messages=openai_chat_encode.encode_messages(HISTORY),
            prompt_cache_key="ses_preserialized",
            reasoning_effort="low",
            stream=True,
            stream_options={"include_usage": True},
            tools=openai_chat_encode.encode_tools(TOOLS),
            max_tokens=4096,
            temperature=0.25,
            top_p=0.9,
        )
        await _drain_openai(stream)
        await sdk.close()
        ours, theirs = fake.requests
        assert fake.violations == []
    assert ours.raw == theirs.raw
    expected = {
        "messages": openai_chat_encode.encode_messages(HISTORY),
        "model": "fake-model",
        "max_tokens": 4096,
        "prompt_cache_key": "ses_preserialized",
        "reasoning_effort": "low",
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0.25,
        "tools": openai_chat_encode.encode_tools(TOOLS),
        "top_p": 0.9,
    }
    assert ours.raw == orjson.dumps(expected)
    assert _headers(ours) == _headers(theirs)
    assert ours.headers["authorization"] == "Bearer sk-test"


async def test_responses_body_is_byte_for_byte_what_the_sdk_create_sent() -> None:
    """issue 13 §1, for the Responses API (``store: false``)."""
    with FakeProvider([Reply(text="a"), Reply(text="b")]) as fake:
        adapter = OpenAIResponsesAdapter(
            base_url=fake.openai_base_url, api_key="sk-test", reasoning_effort="low"
        )
        completed((await outcome(adapter, REQUEST, SESSION_OPTIONS))[0])
        await adapter.aclose()
        sdk = openai.AsyncOpenAI(base_url=fake.openai_base_url, api_key="sk-test")
        stream = await sdk.responses.create(
            model="fake-model",
            input=responses_encode.encode_input(HISTORY),
            include=["reasoning.encrypted_content"],
            prompt_cache_key="ses_preserialized",
            reasoning={"effort": "low"},
            stream=True,
            store=False,
            tools=responses_encode.encode_tools(TOOLS),
            max_output_tokens=4096,
            temperature=0.25,
            top_p=0.9,
        )
        async for _ in stream:
            pass
        await sdk.close()
        ours, theirs = fake.requests
        assert fake.violations == []
    assert ours.raw == theirs.raw
    assert orjson.loads(ours.raw)["input"] == responses_encode.encode_input(HISTORY)
    assert _headers(ours) == _headers(theirs)


async def test_anthropic_body_is_byte_for_byte_what_the_sdk_create_sent() -> None:
    """issue 13 §1, for the Messages API (sampling fields after the SDK's own)."""
    request = ModelRequest(
        model="fake-model",
        messages=HISTORY,
        tools=TOOLS,
        max_output_tokens=4096,
        temperature=0.25,
        top_p=0.9,
        thinking=ThinkingConfig(mode="enabled"),
    )
    with FakeProvider([Reply(text="a"), Reply(text="b")]) as fake:
        adapter = AnthropicAdapter(base_url=fake.anthropic_base_url, api_key="sk-ant")
        completed((await outcome(adapter, request))[0])
        await adapter.aclose()
        sdk = anthropic.AsyncAnthropic(base_url=fake.anthropic_base_url, api_key="sk-ant")
        system, tools, messages = anthropic_encode.with_cache_breakpoints(
            anthropic_encode.encode_system(HISTORY),
            anthropic_encode.encode_tools(TOOLS),
            anthropic_encode.encode_messages(HISTORY),
        )
        stream = await sdk.messages.create(
            model="fake-model",
            messages=messages,
            max_tokens=4096,
            stream=True,
            system=system,
            tools=tools,
            thinking={"type": "enabled", "budget_tokens": 2048},
            extra_body={"temperature": 0.25, "top_p": 0.9},
        )
        async for _ in stream:
            pass
        await sdk.close()
        ours, theirs = fake.requests
        assert fake.violations == []
    assert ours.raw == theirs.raw
    assert _headers(ours) == _headers(theirs)
    assert ours.headers["authorization"] == "Bearer sk-ant"


def _raw_bodies(fake: FakeProvider) -> list[bytes]:
    return [r.raw for r in fake.requests]


async def test_a_retried_call_resends_the_same_preserialized_bytes() -> None:
    """issue 13 §1: the SDK's own retry (a 503 before any output) re-sends the body unchanged."""
    options = ModelCallOptions(model_attempt_id="attempt-1", max_transport_attempts=2)
    with FakeProvider([ErrorReply(status=503), Reply(text="ok")]) as fake:
        adapter = OpenAIChatAdapter(base_url=fake.openai_base_url, api_key="sk-test")
        events, error = await outcome(adapter, REQUEST, options)
        await adapter.aclose()
        first, second = _raw_bodies(fake)
    assert error is None
    completed(events)
    assert first == second


async def test_a_body_json_cannot_carry_is_invalid_request_and_never_sent() -> None:
    """issue 13 §1: a lone surrogate in the history fails encoding as ``invalid_request``
    (not_sent) and nothing reaches the provider."""
    broken = ModelRequest(model="fake-model", messages=(SYSTEM, user_text("bad \ud800 text")))
    with FakeProvider([Reply(text="never")]) as fake:
        for adapter in (
            OpenAIChatAdapter(base_url=fake.openai_base_url, api_key="k"),
            OpenAIResponsesAdapter(base_url=fake.openai_base_url, api_key="k"),
        ):
            _, error = await failure(adapter, broken, OPTIONS)
            await adapter.aclose()
            assert error.kind is ModelErrorKind.INVALID_REQUEST
            assert error.delivery is DeliveryState.NOT_SENT
        anthropic_adapter = AnthropicAdapter(base_url=fake.anthropic_base_url, api_key="k")
        _, error = await failure(anthropic_adapter, broken, OPTIONS)
        await anthropic_adapter.aclose()
        assert error.kind is ModelErrorKind.INVALID_REQUEST
        assert fake.requests == []
