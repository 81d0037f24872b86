"""guarded_events and EventAssembler: timeouts, delivery stamping, closing (model-providers.md §2,
session-runtime.md §6), without any network."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import pytest

from openwork_core.models.adapters.streaming import (
    ChunkStream,
    EventAssembler,
    guarded_events,
)
from openwork_core.models.port import (
    DeliveryState,
    FinishReason,
    ModelCallOptions,
    ModelError,
    ModelErrorKind,
    ModelEvent,
)


class ListStream:
    """Yields its chunks, then waits forever (``hang``) or ends; records ``close``."""

    def __init__(self, chunks: Iterable[object], *, hang: bool = False) -> None:
        self._chunks = list(chunks)
        self._hang = hang
        self.closed = False

    async def __anext__(self) -> object:
        if self._chunks:
            item = self._chunks.pop(0)
            if isinstance(item, BaseException):
                raise item
            return item
        if self._hang:
            await asyncio.Event().wait()
        raise StopAsyncIteration

    async def close(self) -> None:
        self.closed = True


class TextDecoder:
    """Each chunk is a text delta; the end completes."""

    def __init__(self) -> None:
        self.assembler = EventAssembler()

    def feed(self, chunk: object) -> list[ModelEvent]:
        return self.assembler.text(str(chunk))

    def finish(self) -> list[ModelEvent]:
        return self.assembler.complete(finish_reason=FinishReason.STOP, raw_finish_reason="stop")


def options(idle: float = 10.0, total: float = 10.0) -> ModelCallOptions:
    return ModelCallOptions(model_attempt_id="a", idle_timeout_s=idle, total_timeout_s=total)


def no_classifier(exc: BaseException) -> ModelError | None:
    return None


async def drain(stream: ListStream, opts: ModelCallOptions) -> list[ModelEvent]:
    async def open_stream() -> ChunkStream[object]:
        return stream

    return [e async for e in guarded_events(open_stream, TextDecoder(), opts, no_classifier)]


async def test_a_complete_stream_ends_with_one_completion_and_is_closed() -> None:
    stream = ListStream(["a", "b"])
    events = await drain(stream, options())
    assert [e.type for e in events] == [
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "response_completed",
    ]
    assert stream.closed


async def test_silence_longer_than_the_idle_timeout_is_a_timeout_after_output() -> None:
    stream = ListStream(["a"], hang=True)
    with pytest.raises(ModelError) as caught:
        await drain(stream, options(idle=0.05))
    assert caught.value.kind is ModelErrorKind.TIMEOUT
    assert caught.value.delivery is DeliveryState.SEMANTIC_OUTPUT_EMITTED
    assert stream.closed


async def test_the_total_timeout_caps_the_call_even_under_the_idle_timeout() -> None:
    stream = ListStream([], hang=True)
    with pytest.raises(ModelError) as caught:
        await drain(stream, options(idle=30, total=0.05))
    assert caught.value.kind is ModelErrorKind.TIMEOUT
    assert caught.value.delivery is DeliveryState.ACCEPTED_NO_SEMANTIC_OUTPUT


async def test_an_unmapped_exception_passes_through_unchanged() -> None:
    stream = ListStream([ValueError("bug")])
    with pytest.raises(ValueError, match="bug"):
        await drain(stream, options())
    assert stream.closed


async def test_closing_the_consumer_early_closes_the_provider_stream() -> None:
    stream = ListStream(["a", "b", "c"])

    async def open_stream() -> ChunkStream[object]:
        return stream

    events = guarded_events(open_stream, TextDecoder(), options(), no_classifier)
    assert (await anext(events)).type == "text_start"
    await events.aclose()
    assert stream.closed


async def test_an_open_failure_keeps_its_own_delivery() -> None:
    async def open_stream() -> ChunkStream[object]:
        raise ModelError.invalid_request("nope")

    with pytest.raises(ModelError) as caught:
        _ = [e async for e in guarded_events(open_stream, TextDecoder(), options(), no_classifier)]
    assert caught.value.delivery is DeliveryState.NOT_SENT


def test_a_second_completion_is_a_protocol_error() -> None:
    assembler = EventAssembler()
    assembler.complete(finish_reason=FinishReason.STOP, raw_finish_reason="stop")
    with pytest.raises(ModelError) as caught:
        assembler.complete(finish_reason=FinishReason.STOP, raw_finish_reason="stop")
    assert caught.value.kind is ModelErrorKind.PROTOCOL_ERROR


def test_arguments_for_a_tool_call_that_never_started_are_a_protocol_error() -> None:
    with pytest.raises(ModelError):
        EventAssembler().tool_call_arguments(0, "{}")
