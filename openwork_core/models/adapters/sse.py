"""The server-sent events of a streamed model response, read by us (model-providers.md §2).

The SDKs send the request (authentication, retries, status errors); the body of an accepted
stream is read here, with bounds the SDKs' decoders do not have (issue 22 point 6): one event's
data over ``MAX_EVENT_BYTES`` ends the call as a protocol error as soon as that much has arrived,
and every byte is looked at a bounded number of times (a 20 MB line costs one pass, not one
re-scan per network chunk), so a hostile provider cannot pin the event loop.

Each event's ``data`` is one JSON value; ``[DONE]`` (Chat Completions) ends the stream, after
which at most ``DRAIN_LIMIT_BYTES`` more of the body are read: a body read to its end returns
its keep-alive connection to the pool (a closed half-read one would make every model call
connect again). Lines end with LF, CRLF or CR (the SSE grammar); ``:`` comments, ``event``,
``id`` and ``retry`` fields carry nothing an adapter reads.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Protocol

import orjson

from openwork_core.models.port import ModelError

MAX_EVENT_BYTES = 16 * 1024 * 1024
"""One event's data at most: room for a Responses ``response.completed`` that repeats the whole
output (several tool calls of up to 1 MiB of arguments each, JSON-escaped, and the text)."""

DRAIN_LIMIT_BYTES = 64 * 1024
"""At most this much of a body is read past ``[DONE]`` to keep its connection."""

_DONE = b"[DONE]"


class StreamingBody(Protocol):
    """What an ``httpx`` (or ``httpx2``) response of a stream offers."""

    @property
    def headers(self) -> Mapping[str, str]: ...

    def aiter_bytes(self) -> AsyncIterator[bytes]: ...

    async def aclose(self) -> None: ...


def too_large(limit: int) -> ModelError:
    return ModelError.protocol(f"a streamed event is over {limit} bytes")


class SseParser:
    """Bytes in, the ``data`` of each complete event out (its lines joined with LF)."""

    def __init__(self, max_event_bytes: int = MAX_EVENT_BYTES) -> None:
        self._limit = max_event_bytes
        self._partial = bytearray()
        """The line still being received (extended in place: linear in its length)."""
        self._data: list[bytes] = []
        self._size = 0
        """Bytes of the current event's data lines plus the partial line."""
        self._cr = False
        """The last chunk ended with CR: its LF may come first in the next one."""

    def feed(self, chunk: bytes) -> list[bytes]:
        if self._cr:
            chunk = b"\r" + chunk
            self._cr = False
        if chunk.endswith(b"\r"):
            chunk = chunk[:-1]
            self._cr = True
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = chunk.split(b"\n")
        tail = lines.pop()
        events: list[bytes] = []
        if lines:
            if self._partial:
                lines[0] = bytes(self._partial) + lines[0]
                self._partial.clear()
            for line in lines:
                self._line(line, events)
        self._partial += tail
        if self._size + len(self._partial) > self._limit:
            raise too_large(self._limit)
        return events

    def finish(self) -> list[bytes]:
        """The end of the body: a last line without its end still counts; an event without its
        blank line does not (the SSE rule)."""
        events: list[bytes] = []
        if self._partial or self._cr:
            line, self._partial, self._cr = bytes(self._partial), bytearray(), False
            self._line(line, events)
        return events

    def _line(self, line: bytes, events: list[bytes]) -> None:
        if not line:
            if self._data:
                events.append(b"\n".join(self._data))
            self._data, self._size = [], 0
            return
        if not line.startswith(b"data"):
            return  # a comment, ``event``, ``id``, ``retry`` or an unknown field
        name, colon, value = line.partition(b":")
        if name != b"data":
            return
        if colon and value.startswith(b" "):
            value = value[1:]
        self._size += len(value) + 1
        if self._size > self._limit:
            raise too_large(self._limit)
        self._data.append(value)


class SseStream:
    """The JSON values of one streamed body (a ``ChunkStream`` for ``guarded_events``); a value
    that is not JSON is a protocol error."""

    def __init__(self, body: StreamingBody, *, max_event_bytes: int = MAX_EVENT_BYTES) -> None:
        self._body = body
        self._chunks = body.aiter_bytes()
        self._parser = SseParser(max_event_bytes)
        self._ready: list[bytes] = []
        self._ended = False

    @property
    def headers(self) -> Mapping[str, str]:
        """The response's headers (the request id)."""
        return self._body.headers

    def __aiter__(self) -> SseStream:
        return self

    async def __anext__(self) -> object:
        while not self._ready:
            if self._ended:
                raise StopAsyncIteration
            try:
                chunk = await anext(self._chunks)
            except StopAsyncIteration:
                self._ended = True
                self._ready = self._parser.finish()
            else:
                self._ready = self._parser.feed(chunk)
            self._ready.reverse()
        data = self._ready.pop()
        if data.startswith(_DONE):
            await self._drain()
            raise StopAsyncIteration
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            raise ModelError.protocol("a stream event is not valid JSON") from None

    async def _drain(self) -> None:
        self._ended, self._ready = True, []
        drained = 0
        async for rest in self._chunks:
            drained += len(rest)
            if drained > DRAIN_LIMIT_BYTES:
                break

    async def close(self) -> None:
        await self._body.aclose()
