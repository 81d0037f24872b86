"""One provider submission: stream into the draft, return only a completed response
(session-runtime.md §6). Deltas go out live and are never written."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import assert_never

from openwork_chat_state.actor import ChatStateHandle
from openwork_chat_state.error_root import OpenWorkError
from openwork_chat_state.errors import ChatStateError
from openwork_chat_state.messages import (
    ContentBlock,
    Message,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolCallState,
)
from openwork_core.models.port import (
    SEMANTIC_EVENTS,
    DeliveryState,
    ModelCallOptions,
    ModelError,
    ModelPort,
    ModelRequest,
    ModelResponse,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    ResponseCompleted,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from openwork_core.session.outcome import FailureCode, TurnFailure
from openwork_core.session.updates import ReasoningDeltaUpdate, SessionUpdate, TextDeltaUpdate
from openwork_tools.faults import faultpoint


class ModelProtocolViolation(OpenWorkError):
    """No completed response, or more than one."""

    code = FailureCode.MODEL_PROTOCOL_ERROR


@dataclass(frozen=True, slots=True)
class StreamedResponse:
    response: ModelResponse
    semantic_output: bool


async def stream_response(
    port: ModelPort,
    request: ModelRequest,
    options: ModelCallOptions,
    chat: ChatStateHandle,
    emit: Callable[[SessionUpdate], None],
) -> StreamedResponse:
    """Stream one submission. The draft lives in Chat State while streaming; the caller discards
    it on any error. A ModelError raised after semantic output carries that delivery state."""
    await chat.begin_draft()
    completed: ModelResponse | None = None
    semantic = False
    try:
        async for event in port.invoke(request, options):
            if isinstance(event, SEMANTIC_EVENTS):
                semantic = True
            match event:
                case TextDelta(delta=delta):
                    await chat.push_text_delta(delta)
                    emit(TextDeltaUpdate(delta=delta))
                    faultpoint("model_streaming")
                case ReasoningDelta(delta=delta):
                    await chat.push_reasoning_delta(delta)
                    emit(ReasoningDeltaUpdate(delta=delta))
                case ResponseCompleted(response=response):
                    if completed is not None:
                        raise ModelProtocolViolation("the model completed the response twice")
                    completed = response
                case (
                    TextStart()
                    | TextEnd()
                    | ReasoningStart()
                    | ReasoningEnd()
                    | ToolCallStart()
                    | ToolCallDelta()
                    | ToolCallEnd()
                ):
                    pass
                case _:
                    assert_never(event)
    except ModelError as error:
        if semantic and error.delivery is not DeliveryState.SEMANTIC_OUTPUT_EMITTED:
            raise error.with_delivery(DeliveryState.SEMANTIC_OUTPUT_EMITTED) from error
        raise
    except ChatStateError as error:
        raise TurnFailure(FailureCode.CHAT_STATE_ERROR, f"{error.code}: {error}") from error
    if completed is None:
        raise ModelProtocolViolation("the model stream ended without a completed response")
    ids = [call.id for call in completed.tool_calls]
    if len(set(ids)) != len(ids) or not all(i.strip() for i in ids):
        # never persist a response the Conversation could not hold (context-window.md §4.1)
        raise ModelProtocolViolation("the model's tool calls must have distinct, non-blank ids")
    return StreamedResponse(completed, semantic)


def assistant_message(response: ModelResponse) -> Message:
    """Blocks in order: thinking, text, provider-opaque, tool calls (session-runtime.md §6)."""
    blocks: list[ContentBlock] = []
    if response.reasoning_text:
        blocks.append(ThinkingBlock(thinking=response.reasoning_text))
    if response.text:
        blocks.append(TextBlock(text=response.text))
    blocks.extend(response.provider_opaque_blocks)
    blocks.extend(
        ToolCallBlock(id=c.id, name=c.name, input=c.input, state=ToolCallState.SUBMITTED)
        for c in response.tool_calls
    )
    return Message(role=Role.ASSISTANT, content=tuple(blocks))
