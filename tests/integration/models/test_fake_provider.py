"""The fake provider itself: recording, invariant checks, held responses, an exhausted script
(DESIGN.md §4.8), and cancellation of an adapter call waiting on it (model-providers.md §2)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from openwork_chat_state.messages import user_text
from openwork_core.models.adapters.openai_chat import OpenAIChatAdapter
from openwork_core.models.port import ModelCallOptions, ModelError, ModelRequest
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Gate, Held, Reply
from tests.fakes.wire_invariants import anthropic_violations, chat_violations

OPTIONS = ModelCallOptions(model_attempt_id="a", max_transport_attempts=1)
REQUEST = ModelRequest(model="m", messages=(user_text("hi"),))


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider


def test_a_tool_call_without_its_result_is_recorded_as_a_violation(fake: FakeProvider) -> None:
    fake.push(Reply(text="ok"))
    body = {
        "model": "m",
        "stream": True,
        "messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "system", "content": "late"},
        ],
    }
    response = httpx.post(f"{fake.openai_base_url}/chat/completions", json=body, timeout=10)
    assert response.status_code == 200
    assert "data: [DONE]" in response.text
    assert fake.violations == [
        "request 1: a system message at position 3, inside the conversation",
        "request 1: tool calls ['c1'] have no result at the end of the request",
    ]


def test_the_anthropic_check_wants_every_tool_use_answered_in_the_next_user_message() -> None:
    assistant = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f"}]}
    answered = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]}
    assert anthropic_violations({"messages": [assistant, answered]}) == []
    assert anthropic_violations({"messages": [assistant, {"role": "user", "content": "x"}]}) == [
        "message 1 answers tool calls [], expected exactly ['t1']"
    ]
    assert chat_violations({"messages": [{"role": "tool", "tool_call_id": "x"}]}) == [
        "tool message 'x' at 0 answers no open tool call"
    ]


def test_a_request_beyond_the_script_gets_a_500_and_a_violation(fake: FakeProvider) -> None:
    response = httpx.post(f"{fake.openai_base_url}/chat/completions", json={}, timeout=10)
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "fake_script_exhausted"
    assert fake.violations == ["request 1: the script has no step left"]


async def test_a_held_response_waits_for_its_gate(fake: FakeProvider) -> None:
    gate = Gate()
    fake.push(Held(Reply(text="late"), gate))
    adapter = OpenAIChatAdapter(base_url=fake.openai_base_url, api_key="k")

    async def call() -> str:
        return "".join(
            [e.delta async for e in adapter.invoke(REQUEST, OPTIONS) if e.type == "text_delta"]
        )

    task = asyncio.create_task(call())
    requests = await fake.wait_for_requests(1, timeout=10)
    assert requests[0].body["messages"] == [{"role": "user", "content": "hi"}]
    assert not task.done()
    gate.release()
    assert await asyncio.wait_for(task, timeout=10) == "late"
    await adapter.aclose()


async def test_cancelling_a_call_that_waits_on_the_provider_raises_cancelled_not_model_error(
    fake: FakeProvider,
) -> None:
    """§2: cancellation = stop polling; it is not turned into a ModelError."""
    gate = Gate()
    fake.push(Held(Reply(text="never"), gate))
    adapter = OpenAIChatAdapter(base_url=fake.openai_base_url, api_key="k")

    async def call() -> None:
        async for _ in adapter.invoke(REQUEST, OPTIONS):
            pass

    task = asyncio.create_task(call())
    await fake.wait_for_requests(1, timeout=10)
    task.cancel()
    try:
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, timeout=10)
    finally:
        gate.release()
        await adapter.aclose()


async def test_stopping_iteration_midway_closes_the_stream(fake: FakeProvider) -> None:
    fake.push(Reply(text="a long answer in many pieces", chunk_chars=1), Reply(text="next"))
    adapter = OpenAIChatAdapter(base_url=fake.openai_base_url, api_key="k")
    stream = adapter.invoke(REQUEST, OPTIONS)
    first = await anext(stream)
    assert first.type == "text_start"
    await stream.aclose()  # type: ignore[attr-defined]
    events = [e async for e in adapter.invoke(REQUEST, OPTIONS)]
    assert events[-1].type == "response_completed"
    await adapter.aclose()


async def test_an_unreachable_provider_is_a_network_error_possibly_sent() -> None:
    with FakeProvider() as stopped:
        url = stopped.openai_base_url
    adapter = OpenAIChatAdapter(base_url=url, api_key="k")
    with pytest.raises(ModelError) as caught:
        _ = [e async for e in adapter.invoke(REQUEST, OPTIONS)]
    assert caught.value.kind.value == "network"
    assert caught.value.delivery.value == "possibly_sent"
    await adapter.aclose()
