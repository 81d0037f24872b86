"""ScriptedModel: the in-process ModelPort of the runtime tests (DESIGN.md §5; model-providers.md §2;
session-runtime.md §6)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from openwork_chat_state.messages import (
    Message,
    Role,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
    user_text,
)
from openwork_core.models.adapters.request_invariants import (
    conversation_violations,
    prefix_violations,
)
from openwork_core.models.adapters.scripted import (
    ScriptedModel,
    ScriptedResponse,
    ScriptExhausted,
    scripted_events,
)
from openwork_core.models.port import (
    DeliveryState,
    FinishReason,
    ModelCallOptions,
    ModelError,
    ModelErrorKind,
    ModelEvent,
    ModelRequest,
    ResponseCompleted,
)

OPTIONS = ModelCallOptions(model_attempt_id="a1")
SYSTEM = Message(role=Role.SYSTEM, content=(TextBlock(text="sys"),))


def req(*messages: Message) -> ModelRequest:
    return ModelRequest(model="m", messages=(SYSTEM, *messages))


def call_message(*ids: str) -> Message:
    return Message(
        role=Role.ASSISTANT,
        content=tuple(ToolCallBlock(id=i, name="read", input="{}") for i in ids),
    )


def result_message(call_id: str) -> Message:
    block = ToolResultBlock(
        id=call_id, name="read", output=(TextBlock(text="ok"),), state=ToolResultState.SUCCESS
    )
    return Message(role=Role.TOOL, content=(block,))


async def run(model: ScriptedModel, request: ModelRequest) -> list[ModelEvent]:
    return [event async for event in model.invoke(request, OPTIONS)]


async def test_a_text_response_streams_start_delta_end_and_one_completion() -> None:
    model = ScriptedModel([ScriptedResponse(text="hello")])
    events = await run(model, req(user_text("hi")))
    assert [e.type for e in events] == [
        "text_start",
        "text_delta",
        "text_end",
        "response_completed",
    ]
    final = events[-1]
    assert isinstance(final, ResponseCompleted)
    assert final.response.text == "hello"
    assert final.response.finish_reason is FinishReason.STOP
    assert model.requests == [req(user_text("hi"))]


async def test_tool_calls_complete_with_tool_use_and_json_arguments() -> None:
    model = ScriptedModel(
        [ScriptedResponse(text="reading", tool_calls=(("c1", "read", {"path": "a"}),))]
    )
    events = await run(model, req(user_text("go")))
    assert [e.type for e in events if e.type.startswith("tool_call")] == [
        "tool_call_start",
        "tool_call_delta",
        "tool_call_delta",
        "tool_call_end",
    ]
    final = events[-1]
    assert isinstance(final, ResponseCompleted)
    assert final.response.finish_reason is FinishReason.TOOL_USE
    assert final.response.tool_calls == (
        ToolCallBlock(id="c1", name="read", input='{"path": "a"}'),
    )


async def test_reasoning_comes_before_the_text() -> None:
    events = scripted_events(ScriptedResponse(reasoning="hmm", text="yes"))
    assert [e.type for e in events][:4] == [
        "reasoning_start",
        "reasoning_delta",
        "reasoning_end",
        "text_start",
    ]


async def test_a_scripted_error_is_raised_before_any_output() -> None:
    error = ModelError.network("boom")
    model = ScriptedModel([error])
    with pytest.raises(ModelError) as caught:
        await run(model, req(user_text("hi")))
    assert caught.value is error


async def test_an_error_after_text_carries_semantic_output_emitted_and_no_completion() -> None:
    model = ScriptedModel([ScriptedResponse(text="part", error=ModelError.network("cut"))])
    seen: list[ModelEvent] = []
    with pytest.raises(ModelError) as caught:  # noqa: PT012 - the events before it matter
        async for event in model.invoke(req(user_text("hi")), OPTIONS):
            seen.append(event)
    assert caught.value.delivery is DeliveryState.SEMANTIC_OUTPUT_EMITTED
    assert [e.type for e in seen] == ["text_start", "text_delta"]


async def test_a_stream_can_end_without_completion_or_with_two() -> None:
    """session-runtime.md §6: both are protocol errors for the runtime to detect."""
    none = scripted_events(ScriptedResponse(text="x", ending="no_completion"))
    two = scripted_events(ScriptedResponse(text="x", ending="two_completions"))
    assert not any(isinstance(e, ResponseCompleted) for e in none)
    assert sum(isinstance(e, ResponseCompleted) for e in two) == 2


async def test_invalid_scripted_arguments_are_a_protocol_error() -> None:
    model = ScriptedModel([ScriptedResponse(tool_calls=(("c1", "read", "{nope"),))])
    with pytest.raises(ModelError) as caught:
        await run(model, req(user_text("hi")))
    assert caught.value.kind is ModelErrorKind.PROTOCOL_ERROR


async def test_running_out_of_steps_is_an_explicit_error() -> None:
    model = ScriptedModel([])
    with pytest.raises(ScriptExhausted):
        await run(model, req(user_text("hi")))
    assert model.invariant_violations() == [
        "the model was invoked after the script ran out of steps"
    ]


async def test_an_async_step_can_hold_the_model_until_the_test_releases_it() -> None:
    release = asyncio.Event()

    async def held(request: ModelRequest) -> AsyncIterator[ModelEvent]:
        await release.wait()
        for event in scripted_events(ScriptedResponse(text="late")):
            yield event

    model = ScriptedModel([held])
    task = asyncio.create_task(run(model, req(user_text("hi"))))
    await model.wait_for_requests(1, timeout=5)
    assert not task.done()
    release.set()
    events = await asyncio.wait_for(task, timeout=5)
    assert events[-1].type == "response_completed"


async def test_an_async_step_can_be_cancelled_while_it_waits() -> None:
    async def forever(request: ModelRequest) -> AsyncIterator[ModelEvent]:
        await asyncio.Event().wait()
        yield scripted_events(ScriptedResponse(text="never"))[0]

    model = ScriptedModel([forever])
    task = asyncio.create_task(run(model, req(user_text("hi"))))
    await model.wait_for_requests(1, timeout=5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=5)


def test_a_tool_call_answered_right_after_its_assistant_message_is_valid() -> None:
    messages = (SYSTEM, user_text("go"), call_message("a", "b"), result_message("a"))
    assert conversation_violations((*messages, result_message("b"))) == []
    assert conversation_violations(messages) == [
        "tool calls ['b'] have no result at the end of the request"
    ]


def test_a_result_for_no_open_call_and_a_late_system_message_are_violations() -> None:
    found = conversation_violations((SYSTEM, user_text("go"), result_message("x"), SYSTEM))
    assert found == [
        "tool result 'x' at 2 answers no open call",
        "system message at position 3, inside the conversation",
    ]


def test_a_result_after_an_intervening_user_message_is_a_violation() -> None:
    found = conversation_violations((call_message("a"), user_text("hey"), result_message("a")))
    assert found[0] == "tool calls ['a'] have no result before position 1"


def test_each_request_must_extend_the_previous_conversation() -> None:
    first = req(user_text("go"))
    second = req(user_text("go"), call_message("a"), result_message("a"))
    rewritten = req(user_text("something else"))
    assert prefix_violations([first, second]) == []
    assert prefix_violations([second, rewritten]) == [
        "request 2 does not extend the conversation of request 1"
    ]


async def test_the_model_checks_invariants_on_every_recorded_request() -> None:
    model = ScriptedModel([ScriptedResponse(text="a"), ScriptedResponse(text="b")])
    await run(model, req(user_text("go"), call_message("a")))
    await run(model, req(user_text("again")))
    assert model.invariant_violations(check_prefix=True) == [
        "request 1: tool calls ['a'] have no result at the end of the request",
        "request 2 does not extend the conversation of request 1",
    ]
    with pytest.raises(AssertionError):
        model.assert_invariants()
