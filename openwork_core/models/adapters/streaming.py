"""What every streaming adapter shares (model-providers.md §2, session-runtime.md §6).

``EventAssembler`` turns decoded provider deltas into ``ModelEvent``s with block indexes and builds
the final ``ModelResponse``; ``guarded_events`` runs one provider stream under the idle and total
timeouts, maps exceptions to ``ModelError`` and stamps the delivery state.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Awaitable, Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import NoReturn, Protocol, TypeVar, cast

import httpx

from openwork_chat_state.messages import ProviderOpaqueBlock, ToolCallBlock, ToolCallState
from openwork_core.models.port import (
    SEMANTIC_EVENTS,
    DeliveryState,
    FinishReason,
    ModelCallOptions,
    ModelError,
    ModelEvent,
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
from openwork_core.usage import TokenUsage

STREAM_ENDED_EARLY = "Responses stream ended before a terminal event"
"""model-providers.md §2: the network error of a stream that ends without a terminal event."""

MAX_TOOL_ARGUMENTS_BYTES = 1024 * 1024
"""One tool call's arguments at most, in UTF-8 (issue 22 point 6; the 1 MiB of tools.md's
``write`` and ``edit`` contents): more is a protocol error the moment it arrives."""

MAX_OUTPUT_CHARS = 8 * 1024 * 1024
"""One response at most, in characters — its text, reasoning, tool calls (ids, names, arguments)
and the provider's signed or encrypted reasoning together: some 16 times the longest output any
model is allowed to write (128k tokens), so only a broken or hostile provider reaches it."""

MAX_TOOL_CALLS = 1024
"""One response's tool calls at most: models make a few at a time, and each call is run, stored
and answered, so more is a broken or hostile provider."""


def utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


@dataclass(slots=True)
class _ToolCall:
    index: int
    id: str
    name: str
    parts: list[str] = field(default_factory=list)
    """The argument deltas, joined once at the end (``+=`` per delta is quadratic)."""
    size: int = 0
    ended: bool = False

    @property
    def arguments(self) -> str:
        return "".join(self.parts)


class EventAssembler:
    """Numbers output blocks in arrival order and accumulates the response.

    Text and reasoning are one open block at a time; a block of the other kind (or a tool call)
    closes it. Tool calls are keyed by the provider's own key (an index or a block number) and
    finalised when the response completes: empty input becomes ``{}``, input that is not valid
    JSON is a protocol error.
    """

    def __init__(self) -> None:
        self._next_index = 0
        self._open: TextStart | ReasoningStart | None = None
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[Hashable, _ToolCall] = {}
        self._opaque: list[ProviderOpaqueBlock] = []
        self._output_chars = 0
        self._completed = False

    @property
    def completed(self) -> bool:
        return self._completed

    def _take_index(self) -> int:
        index = self._next_index
        self._next_index += 1
        return index

    def close_open_block(self) -> list[ModelEvent]:
        opened, self._open = self._open, None
        if isinstance(opened, TextStart):
            return [TextEnd(index=opened.index, id=opened.id)]
        if isinstance(opened, ReasoningStart):
            return [ReasoningEnd(index=opened.index, id=opened.id)]
        return []

    def count_output(self, delta: str) -> None:
        """Count ``delta`` against the response's bound as it arrives (adapters count the
        provider's opaque data this way before they keep it)."""
        self._output_chars += len(delta)
        if self._output_chars > MAX_OUTPUT_CHARS:
            raise ModelError.protocol(f"the response is over {MAX_OUTPUT_CHARS} characters")

    def text(self, delta: str) -> list[ModelEvent]:
        if not delta:
            return []
        self.count_output(delta)
        events: list[ModelEvent] = []
        if not isinstance(self._open, TextStart):
            events += self.close_open_block()
            index = self._take_index()
            self._open = TextStart(index=index, id=f"text_{index}")
            events.append(self._open)
        self._text.append(delta)
        events.append(TextDelta(index=self._open.index, delta=delta))
        return events

    def reasoning(self, delta: str) -> list[ModelEvent]:
        if not delta:
            return []
        self.count_output(delta)
        events: list[ModelEvent] = []
        if not isinstance(self._open, ReasoningStart):
            events += self.close_open_block()
            index = self._take_index()
            self._open = ReasoningStart(index=index, id=f"reasoning_{index}")
            events.append(self._open)
        self._reasoning.append(delta)
        events.append(ReasoningDelta(index=self._open.index, delta=delta))
        return events

    def opaque(self, block: ProviderOpaqueBlock) -> None:
        """Keep a provider-opaque block for the response (no event: it is not model output)."""
        self._opaque.append(block)

    def has_tool_call(self, key: Hashable) -> bool:
        return key in self._calls

    def tool_call_start(self, key: Hashable, call_id: str, name: str) -> list[ModelEvent]:
        if key in self._calls:
            raise ModelError.protocol(f"tool call {key!r} started twice")
        if not call_id or not name:
            raise ModelError.protocol("a tool call started without an id or a name")
        if len(self._calls) == MAX_TOOL_CALLS:
            raise ModelError.protocol(f"the response has over {MAX_TOOL_CALLS} tool calls")
        self.count_output(call_id)
        self.count_output(name)
        events = self.close_open_block()
        call = _ToolCall(index=self._take_index(), id=call_id, name=name)
        self._calls[key] = call
        events.append(ToolCallStart(index=call.index, id=call.id, name=call.name))
        return events

    def tool_call_arguments(self, key: Hashable, delta: str) -> list[ModelEvent]:
        call = self._calls.get(key)
        if call is None or call.ended:
            raise ModelError.protocol(f"arguments for tool call {key!r}, which is not open")
        if not delta:
            return []
        call.size += utf8_size(delta)
        if call.size > MAX_TOOL_ARGUMENTS_BYTES:
            detail = f"tool call {call.name!r} has arguments over {MAX_TOOL_ARGUMENTS_BYTES} bytes"
            raise ModelError.protocol(detail)
        self.count_output(delta)
        call.parts.append(delta)
        return [ToolCallDelta(index=call.index, id=call.id, partial_input=delta)]

    def tool_call_end(self, key: Hashable) -> list[ModelEvent]:
        call = self._calls.get(key)
        if call is None or call.ended:
            return []
        call.ended = True
        return [ToolCallEnd(index=call.index, id=call.id)]

    def complete(
        self,
        *,
        finish_reason: FinishReason,
        raw_finish_reason: str | None,
        usage: TokenUsage | None = None,
        response_id: str | None = None,
        model: str | None = None,
        provider_request_id: str | None = None,
    ) -> list[ModelEvent]:
        if self._completed:
            raise ModelError.protocol("the response completed twice")
        events = self.close_open_block()
        tool_calls: list[ToolCallBlock] = []
        for key in list(self._calls):
            events += self.tool_call_end(key)
            call = self._calls[key]
            tool_calls.append(
                ToolCallBlock(
                    id=call.id,
                    name=call.name,
                    input=finalize_tool_input(call.name, call.arguments),
                    state=ToolCallState.SUBMITTED,
                )
            )
        if tool_calls and finish_reason is FinishReason.STOP:
            finish_reason = FinishReason.TOOL_USE
        self._completed = True
        response = ModelResponse(
            text="".join(self._text),
            tool_calls=tuple(tool_calls),
            reasoning_text="".join(self._reasoning) if self._reasoning else None,
            finish_reason=finish_reason,
            raw_finish_reason=raw_finish_reason,
            response_id=response_id,
            provider_request_id=provider_request_id,
            model=model,
            usage=usage,
            provider_opaque_blocks=tuple(self._opaque),
        )
        events.append(ResponseCompleted(response=response))
        return events


def finalize_tool_input(name: str, arguments: str) -> str:
    """model-providers.md §2: empty input becomes ``{}``; input that is not JSON is a protocol
    error."""
    if not arguments.strip():
        return "{}"
    try:
        json.loads(arguments)
    except ValueError:
        detail = f"tool call {name!r} has arguments that are not valid JSON"
        raise ModelError.protocol(detail) from None
    return arguments


# -- reading a stream's JSON (a field of the wrong type counts as absent) ----------------------
def json_object(value: object) -> Mapping[str, object]:
    """A JSON object of the stream, or an empty one for anything else (absent, null, wrong)."""
    return cast(Mapping[str, object], value) if isinstance(value, dict) else {}


def json_array(value: object) -> list[object]:
    return cast(list[object], value) if isinstance(value, list) else []


def json_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def json_str(value: object) -> str:
    """A string field, or ``""`` for anything else."""
    return value if isinstance(value, str) else ""


# -- running one stream ------------------------------------------------------------------------
T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
T_contra = TypeVar("T_contra", contravariant=True)


class ChunkStream(Protocol[T_co]):
    """What the SDKs' ``AsyncStream`` offers: the next chunk, and a close."""

    def __anext__(self) -> Awaitable[T_co]: ...

    async def close(self) -> None: ...


class StreamDecoder(Protocol[T_contra]):
    def feed(self, chunk: T_contra) -> Iterable[ModelEvent]:
        """Events for one chunk; raises ModelError for a protocol or in-stream error."""
        ...

    def finish(self) -> Iterable[ModelEvent]:
        """Events at the end of the stream (the completion); raises ModelError when the stream
        ended before its terminal event."""
        ...


def transport_error(exc: BaseException) -> ModelError | None:
    """httpx failures while reading a stream (the SDKs do not wrap those). Only the SDK
    adapters stream over httpx (this module is part of the session runtime)."""
    if isinstance(exc, httpx.TimeoutException):
        return ModelError.timeout()
    if isinstance(exc, httpx.HTTPError):
        return ModelError.network(f"stream interrupted ({type(exc).__name__})")
    return None


def _stamp(error: ModelError, *, opened: bool, emitted: bool) -> ModelError:
    if emitted:
        return error.with_delivery(DeliveryState.SEMANTIC_OUTPUT_EMITTED)
    if opened and error.delivery in (DeliveryState.POSSIBLY_SENT, DeliveryState.NOT_SENT):
        return error.with_delivery(DeliveryState.ACCEPTED_NO_SEMANTIC_OUTPUT)
    return error


async def guarded_events(
    open_stream: Callable[[], Awaitable[ChunkStream[T]]],
    decoder: StreamDecoder[T],
    options: ModelCallOptions,
    classify: Callable[[BaseException], ModelError | None],
) -> AsyncGenerator[ModelEvent, None]:
    """Open the provider stream and decode it, bounded by ``options.total_timeout_s`` overall and
    ``options.idle_timeout_s`` between chunks. Every failure leaves as a ``ModelError`` whose
    delivery is ``semantic_output_emitted`` once a text, reasoning or tool-call event was yielded.
    Cancellation propagates unchanged; the stream is closed on every exit."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + options.total_timeout_s
    stream: ChunkStream[T] | None = None
    emitted = False

    def fail(exc: Exception) -> NoReturn:
        if isinstance(exc, ModelError):
            error = exc
        elif isinstance(exc, TimeoutError):
            error = ModelError.timeout()
        else:
            mapped = classify(exc) or transport_error(exc)
            if mapped is None:
                raise exc
            error = mapped
        stamped = _stamp(error, opened=stream is not None, emitted=emitted)
        if stamped is exc:
            raise exc
        raise stamped from exc

    try:
        try:
            async with asyncio.timeout_at(deadline):
                stream = await open_stream()
        except Exception as exc:
            fail(exc)
        while True:
            ended = False
            try:
                async with asyncio.timeout_at(min(deadline, loop.time() + options.idle_timeout_s)):
                    chunk = await anext(stream)
                events = list(decoder.feed(chunk))
            except StopAsyncIteration:
                ended = True
            except Exception as exc:
                fail(exc)
            if ended:
                try:
                    events = list(decoder.finish())
                except Exception as exc:
                    fail(exc)
            for event in events:
                if isinstance(event, SEMANTIC_EVENTS):
                    emitted = True
                yield event
            if ended:
                return
    finally:
        if stream is not None:
            await stream.close()
