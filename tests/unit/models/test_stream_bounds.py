"""The stream reader and the event assembler: server-sent events read by us, and bounded
provider output (model-providers.md §2; issue 22 point 6), without any network."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping

import pytest

from openwork_core.models.adapters.anthropic import MessagesStreamDecoder
from openwork_core.models.adapters.sse import DRAIN_LIMIT_BYTES, SseParser, SseStream
from openwork_core.models.adapters.streaming import (
    MAX_OUTPUT_CHARS,
    MAX_TOOL_ARGUMENTS_BYTES,
    MAX_TOOL_CALLS,
    EventAssembler,
)
from openwork_core.models.port import (
    FinishReason,
    ModelError,
    ModelErrorKind,
    ResponseCompleted,
)


def parse(chunks: Iterable[bytes], limit: int = 1 << 20) -> list[bytes]:
    parser = SseParser(limit)
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    return events + parser.finish()


def test_events_end_at_a_blank_line_whatever_the_line_ends_and_the_chunking() -> None:
    """model-providers.md §2: SSE lines end with LF, CRLF or CR, split anywhere by the network;
    data lines of one event join with LF; comments and other fields carry nothing."""
    wire = b'data: {"a":1}\r\n\r\n: a comment\nevent: x\nid: 7\ndata: {"b":\ndata: 2}\n\ndata:3\r\r'
    expected = [b'{"a":1}', b'{"b":\n2}', b"3"]
    assert parse([wire]) == expected
    assert parse([wire[i : i + 1] for i in range(len(wire))]) == expected
    for cut in range(len(wire)):
        assert parse([wire[:cut], wire[cut:]]) == expected, cut


def test_an_event_without_its_blank_line_is_not_dispatched() -> None:
    """The SSE rule: a body that ends mid-event drops it (the stream then ends early)."""
    assert parse([b"data: 1\n\ndata: 2\n"]) == [b"1"]


def test_an_event_over_the_limit_fails_as_it_arrives_even_without_a_line_end() -> None:
    """issue 22 point 6: one event's data over the bound is a protocol error the moment the bound
    is crossed, whether its bytes come as one endless line or as many data lines."""
    parser = SseParser(1000)
    parser.feed(b"data: " + b"x" * 900)
    with pytest.raises(ModelError) as raised:
        parser.feed(b"x" * 200)
    assert raised.value.kind is ModelErrorKind.PROTOCOL_ERROR
    lines = SseParser(1000)
    for _ in range(90):
        lines.feed(b"data: xxxxxxxxxx\n")
    with pytest.raises(ModelError):
        lines.feed(b"data: xxxxxxxxxx\n" * 10)
    small = SseParser(1000)
    for _ in range(200):  # many small events: each under the bound
        assert small.feed(b"data: xxxxxxxxxx\n\n") == [b"xxxxxxxxxx"]


class Body:
    """A streamed HTTP body: its chunks, then the end; records how much was read."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = list(chunks)
        self.read = 0
        self.closed = False
        self.headers: Mapping[str, str] = {"x-request-id": "req_1"}

    async def _iterate(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            self.read += len(chunk)
            yield chunk

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        return self._iterate()

    async def aclose(self) -> None:
        self.closed = True


async def values(stream: SseStream) -> list[object]:
    return [value async for value in stream]


async def test_done_ends_the_stream_after_a_bounded_drain_of_the_body() -> None:
    """Chat Completions' ``[DONE]`` ends the values; the rest of the body is read (up to a
    bound) so its keep-alive connection goes back to the pool."""
    head = b'data: {"a": 1}\n\ndata: [DONE]\n\n'
    body = Body([head, *[b"\n"] * 10])
    assert await values(SseStream(body)) == [{"a": 1}]
    assert body.read == len(head) + 10
    endless = Body([b"data: [DONE]\n\n", *[b"x" * 1024] * (DRAIN_LIMIT_BYTES // 512)])
    assert await values(SseStream(endless)) == []
    assert endless.read <= len(b"data: [DONE]\n\n") + DRAIN_LIMIT_BYTES + 1024


async def test_an_event_that_is_not_json_is_a_protocol_error() -> None:
    with pytest.raises(ModelError) as raised:
        await values(SseStream(Body([b"data: {nope\n\n"])))
    assert raised.value.kind is ModelErrorKind.PROTOCOL_ERROR


def test_tool_call_arguments_over_one_mib_are_a_protocol_error_when_they_arrive() -> None:
    """issue 22 point 6: a tool call's arguments over 1 MiB (UTF-8) end the call at the delta
    that crosses the bound; up to the bound they complete as sent."""
    assembler = EventAssembler()
    assembler.tool_call_start(0, "call_1", "write")
    piece = '"' + "é" * 1023 + '"'  # 2 048 bytes, 1 025 characters
    for _ in range(MAX_TOOL_ARGUMENTS_BYTES // len(piece.encode()) - 1):
        assembler.tool_call_arguments(0, piece)
    with pytest.raises(ModelError) as raised:
        assembler.tool_call_arguments(0, piece * 2)
    assert raised.value.kind is ModelErrorKind.PROTOCOL_ERROR
    assert "arguments over 1048576 bytes" in raised.value.message

    exact = EventAssembler()
    exact.tool_call_start(0, "call_1", "write")
    body = '{"content": "' + "x" * (MAX_TOOL_ARGUMENTS_BYTES - 15) + '"}'
    for start in range(0, len(body), 4096):
        exact.tool_call_arguments(0, body[start : start + 4096])
    (*_, done) = exact.complete(finish_reason=FinishReason.TOOL_USE, raw_finish_reason=None)
    assert isinstance(done, ResponseCompleted)
    assert done.response.tool_calls[0].input == body


def test_text_and_reasoning_over_the_output_bound_are_a_protocol_error() -> None:
    """issue 22 point 6: the response's text and reasoning together are bounded."""
    assembler = EventAssembler()
    half = "x" * (MAX_OUTPUT_CHARS // 2)
    assembler.reasoning(half)
    assembler.text(half)
    with pytest.raises(ModelError) as raised:
        assembler.text("y")
    assert raised.value.kind is ModelErrorKind.PROTOCOL_ERROR


def test_tool_calls_count_toward_the_response_bound_and_their_number_is_bounded() -> None:
    """issue 22 point 6: each call under its own 1 MiB, nine of them passed the response's bound
    unnoticed (9 MiB held, then stored); now every call's id, name and arguments count toward
    the response's characters, and a response of more than ``MAX_TOOL_CALLS`` calls (each is run,
    stored and answered) is a protocol error at the call that crosses."""
    assembler = EventAssembler()
    arguments = '{"content": "' + "x" * (MAX_TOOL_ARGUMENTS_BYTES - 64) + '"}'
    calls = MAX_OUTPUT_CHARS // len(arguments)
    for n in range(calls):
        assembler.tool_call_start(n, f"call_{n}", "write")
        assembler.tool_call_arguments(n, arguments)
    assembler.tool_call_start(calls, f"call_{calls}", "write")
    with pytest.raises(ModelError) as raised:
        assembler.tool_call_arguments(calls, arguments)
    assert raised.value.kind is ModelErrorKind.PROTOCOL_ERROR
    assert f"the response is over {MAX_OUTPUT_CHARS} characters" in raised.value.message

    many = EventAssembler()
    for n in range(MAX_TOOL_CALLS):
        many.tool_call_start(n, f"call_{n}", "read")
    with pytest.raises(ModelError) as raised:
        many.tool_call_start(MAX_TOOL_CALLS, "call_last", "read")
    assert f"over {MAX_TOOL_CALLS} tool calls" in raised.value.message


def test_signed_reasoning_counts_toward_the_response_bound_as_it_arrives() -> None:
    """issue 22 point 6: Anthropic's thinking signature is kept across ``signature_delta``
    events, each under the event bound; the deltas count toward the response's characters as
    they arrive instead of growing without end."""
    decoder = MessagesStreamDecoder()
    decoder.feed(
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        }
    )
    piece = "s" * (1 << 20)
    delta = {"type": "content_block_delta", "index": 0}
    for _ in range(MAX_OUTPUT_CHARS // len(piece)):
        decoder.feed(delta | {"delta": {"type": "signature_delta", "signature": piece}})
    with pytest.raises(ModelError) as raised:
        decoder.feed(delta | {"delta": {"type": "signature_delta", "signature": "s"}})
    assert raised.value.kind is ModelErrorKind.PROTOCOL_ERROR
