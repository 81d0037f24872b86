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
from openwork_core.storage.codec import is_storable_text
from openwork_tools.faults import faultpoint


class ModelProtocolViolation(OpenWorkError):
    """No completed response, or more than one."""

    code = FailureCode.MODEL_PROTOCOL_ERROR


@dataclass(frozen=True, slots=True)
class StreamedResponse:
    response: ModelResponse
    semantic_output: bool


MAX_CALL_ID_CHARS = 256
"""A provider's tool call id at most (theirs are some 10 to 40): the id is stored as it came and
indexed with its turn, and PostgreSQL cannot index a value over 2 704 bytes."""


def _storable_call_id(call_id: str) -> bool:
    """A call id is the provider's token, stored as it came: one storage cannot hold is the
    provider's broken output, not a persistence error."""
    blank = not call_id.strip()
    return not blank and len(call_id) <= MAX_CALL_ID_CHARS and is_storable_text(call_id)


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
    if len(set(ids)) != len(ids) or not all(map(_storable_call_id, ids)):
        # never persist a response the Conversation could not hold (context-window.md §4.1)
        raise ModelProtocolViolation(
            "the model's tool calls must have distinct, non-blank ids of at most "
            f"{MAX_CALL_ID_CHARS} characters, without U+0000 or a lone surrogate"
        )
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
