"""Prompt caching, per-submission usage and per-provider wire options (issue 14 points 3-5), each
adapter through its real SDK over loopback against the fake provider, streaming."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
from openwork_core.models.adapters.anthropic import AnthropicAdapter
from openwork_core.models.adapters.openai_chat import MaxTokensField, OpenAIChatAdapter
from openwork_core.models.adapters.openai_responses import OpenAIResponsesAdapter
from openwork_core.models.port import ModelCallOptions, ModelRequest, ModelResponse
from openwork_core.usage import TokenUsage
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply
from tests.integration.models.loopback import SYSTEM, completed, outcome

TOOLS = (
    ToolDefinition(name="read", description="Read a file"),
    ToolDefinition(name="write", description="Write a file"),
)
EPHEMERAL = {"type": "ephemeral"}
SESSION_OPTIONS = ModelCallOptions(
    model_attempt_id="attempt-1", max_transport_attempts=1, session_id="ses_cache"
)


def request(*messages: Message, tools: tuple[ToolDefinition, ...] = TOOLS) -> ModelRequest:
    return ModelRequest(
        model="m-fake",
        messages=(SYSTEM, *(messages or (user_text("hi"),))),
        tools=tools,
        max_output_tokens=1024,
    )


def history() -> tuple[Message, ...]:
    result = ToolResultBlock(
        id="t1", name="read", output=(TextBlock(text="A"),), state=ToolResultState.SUCCESS
    )
    return (
        user_text("read a"),
        Message(
            role=Role.ASSISTANT,
            content=(TextBlock(text="reading"), ToolCallBlock(id="t1", name="read", input="{}")),
        ),
        Message(role=Role.TOOL, content=(result,)),
    )


def markers(body: Mapping[str, object]) -> list[str]:
    """Where the ``cache_control`` markers sit, as ``region[index](.content[index])``."""
    found: list[str] = []
    for region in ("tools", "system"):
        entries = body.get(region)
        for position, entry in enumerate(entries if isinstance(entries, list) else ()):
            if "cache_control" in entry:
                assert entry["cache_control"] == EPHEMERAL
                found.append(f"{region}[{position}]")
    messages = body["messages"]
    assert isinstance(messages, list)
    for position, message in enumerate(messages):
        content = message["content"]
        for index, block in enumerate(content if isinstance(content, list) else ()):
            if "cache_control" in block:
                assert block["cache_control"] == EPHEMERAL
                found.append(f"messages[{position}].content[{index}]")
    return found


async def anthropic_call(
    fake: FakeProvider, req: ModelRequest, reply: Reply | None = None
) -> ModelResponse:
    port = AnthropicAdapter(base_url=fake.anthropic_base_url, api_key="k")
    try:
        fake.push(reply or Reply(text="ok"))
        events, error = await outcome(port, req)
        assert error is None
        return completed(events)
    finally:
        await port.aclose()


async def test_anthropic_marks_the_last_tool_the_system_and_the_newest_message(
    fake: FakeProvider,
) -> None:
    """Point 4: ``cache_control: ephemeral`` on the stable prefix (last tool definition, last
    system block) and on the last block of the newest message — at most four breakpoints."""
    await anthropic_call(fake, request(*history()))
    found = markers(fake.bodies[0])
    assert found == ["tools[1]", "system[0]", "messages[2].content[0]"]
    assert len(found) <= 4


async def test_anthropic_without_tools_marks_the_system_block_and_the_newest_message(
    fake: FakeProvider,
) -> None:
    await anthropic_call(fake, request(user_text("hi"), tools=()))
    assert markers(fake.bodies[0]) == ["system[0]", "messages[0].content[0]"]


async def test_each_anthropic_call_marks_its_own_newest_message(fake: FakeProvider) -> None:
    """Point 4: the breakpoint moves with the Conversation, so call n+1 reads call n's prefix
    (everything up to its newest message) from the cache."""
    first = (user_text("read a"),)
    await anthropic_call(fake, request(*first))
    await anthropic_call(fake, request(*history()))
    assert markers(fake.bodies[0])[-1] == "messages[0].content[0]"
    assert markers(fake.bodies[1])[-1] == "messages[2].content[0]"
    first_messages = fake.bodies[0]["messages"]
    second_messages = fake.bodies[1]["messages"]
    assert isinstance(first_messages, list) and isinstance(second_messages, list)
    assert first_messages[0]["content"][0]["text"] == second_messages[0]["content"][0]["text"]


async def test_cache_markers_leave_the_request_copy_unchanged(fake: FakeProvider) -> None:
    """Point 4: the markers are encoding; the request copy (what the budget measures) is the same
    bytes before and after the call."""
    req = request(*history())
    before = orjson.dumps(req)
    await anthropic_call(fake, req)
    assert orjson.dumps(req) == before
    assert b"cache_control" not in before


async def test_anthropic_reports_cache_reads_and_writes(fake: FakeProvider) -> None:
    """Point 5: ``cache_read_input_tokens`` → cached input, ``cache_creation_input_tokens`` →
    cache writes; input is the sum of uncached, read and written."""
    response = await anthropic_call(
        fake,
        request(),
        Reply(text="ok", input_tokens=10, cached_tokens=300, cache_write_tokens=40),
    )
    assert response.usage == TokenUsage(
        input_tokens=350,
        output_tokens=7,
        total_tokens=357,
        cached_input_tokens=300,
        cache_write_tokens=40,
    )


async def test_openai_chat_sends_the_session_id_as_prompt_cache_key(fake: FakeProvider) -> None:
    """Point 4 (Chat Completions): ``prompt_cache_key`` = the session id; cached input from
    ``prompt_tokens_details.cached_tokens``, reasoning from ``completion_tokens_details``."""
    port = OpenAIChatAdapter(base_url=fake.openai_base_url, api_key="k")
    try:
        fake.push(Reply(text="ok", input_tokens=100, cached_tokens=64, reasoning_tokens=5))
        events, error = await outcome(port, request(), SESSION_OPTIONS)
        assert error is None
        usage = completed(events).usage
        fake.push(Reply(text="ok"))
        _, error = await outcome(port, request())
        assert error is None
    finally:
        await port.aclose()
    assert fake.bodies[0]["prompt_cache_key"] == "ses_cache"
    assert "prompt_cache_key" not in fake.bodies[1]
    assert usage is not None
    assert (usage.input_tokens, usage.cached_input_tokens, usage.reasoning_tokens) == (100, 64, 5)


async def test_openai_responses_sends_the_session_id_as_prompt_cache_key(
    fake: FakeProvider,
) -> None:
    """Point 4 (Responses) and point 5: ``input_tokens_details.cached_tokens``,
    ``output_tokens_details.reasoning_tokens``."""
    port = OpenAIResponsesAdapter(base_url=fake.openai_base_url, api_key="k")
    try:
        fake.push(Reply(text="ok", input_tokens=100, cached_tokens=80, reasoning_tokens=6))
        events, error = await outcome(port, request(), SESSION_OPTIONS)
        assert error is None
    finally:
        await port.aclose()
    assert fake.bodies[0]["prompt_cache_key"] == "ses_cache"
    usage = completed(events).usage
    assert usage is not None
    assert (usage.cached_input_tokens, usage.reasoning_tokens) == (80, 6)


# -- per-provider wire options ---------------------------------------------------------------------
async def chat_body(
    fake: FakeProvider,
    *,
    max_tokens_field: MaxTokensField = "max_tokens",
    stream_usage: bool = True,
    reasoning_effort: str | None = None,
) -> Mapping[str, object]:
    port = OpenAIChatAdapter(
        base_url=fake.openai_base_url,
        api_key="k",
        max_tokens_field=max_tokens_field,
        stream_usage=stream_usage,
        reasoning_effort="high" if reasoning_effort == "high" else None,
    )
    try:
        fake.push(Reply(text="ok"))
        _, error = await outcome(port, request())
        assert error is None
    finally:
        await port.aclose()
    return fake.bodies[-1]


def limit_fields(body: Mapping[str, object]) -> Sequence[str]:
    return [f for f in ("max_tokens", "max_completion_tokens") if f in body]


async def test_chat_sends_the_token_limit_in_the_configured_field(fake: FakeProvider) -> None:
    """Issue 14 point 3: ``max_tokens`` (default), ``max_completion_tokens`` (OpenAI reasoning
    models) or none at all."""
    assert limit_fields(await chat_body(fake)) == ["max_tokens"]
    body = await chat_body(fake, max_tokens_field="max_completion_tokens")
    assert (limit_fields(body), body["max_completion_tokens"]) == (["max_completion_tokens"], 1024)
    assert limit_fields(await chat_body(fake, max_tokens_field="none")) == []


async def test_chat_stream_usage_off_sends_no_stream_options(fake: FakeProvider) -> None:
    assert (await chat_body(fake))["stream_options"] == {"include_usage": True}
    assert "stream_options" not in await chat_body(fake, stream_usage=False)


async def test_reasoning_effort_is_sent_only_when_configured(fake: FakeProvider) -> None:
    """context-window.md §6: no sampling or thinking parameter unless configured."""
    default = await chat_body(fake)
    assert not {"reasoning_effort", "temperature", "top_p"} & set(default)
    assert (await chat_body(fake, reasoning_effort="high"))["reasoning_effort"] == "high"
    plain = OpenAIResponsesAdapter(base_url=fake.openai_base_url, api_key="k")
    effortful = OpenAIResponsesAdapter(
        base_url=fake.openai_base_url, api_key="k", reasoning_effort="low"
    )
    try:
        for port in (plain, effortful):
            fake.push(Reply(text="ok"))
            _, error = await outcome(port, request())
            assert error is None
    finally:
        await plain.aclose()
        await effortful.aclose()
    assert not {"reasoning", "temperature", "top_p"} & set(fake.bodies[-2])
    assert fake.bodies[-1]["reasoning"] == {"effort": "low"}
    anthropic = AnthropicAdapter(base_url=fake.anthropic_base_url, api_key="k")
    try:
        fake.push(Reply(text="ok"))
        _, error = await outcome(anthropic, request())
        assert error is None
    finally:
        await anthropic.aclose()
    assert not {"thinking", "temperature", "top_p"} & set(fake.bodies[-1])
