"""A lean HTTP/1.1 client for ``bench/load.py``: the load generator is not what is measured, so it
spends as little CPU per model call as it can (raw asyncio streams, no per-event parsing beyond
finding its turn's ``turn_finished``), leaving the cores to the daemons, PostgreSQL and the fakes.

It speaks only what the bench needs of the daemon: a JSON request with a ``Content-Length`` answer
and one Server-Sent Events stream in chunked transfer encoding."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from types import TracebackType

import orjson

_FINISHED = b'"turn_finished"'


class ProtocolError(Exception):
    """The daemon answered something this client does not speak."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: bytes

    def json(self) -> object:
        return orjson.loads(self.body)


async def _head(reader: asyncio.StreamReader) -> tuple[int, dict[bytes, bytes]]:
    raw = await reader.readuntil(b"\r\n\r\n")
    lines = raw.split(b"\r\n")
    status = int(lines[0].split(b" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return status, headers


def _request(method: str, host: str, path: str, token: str, body: bytes | None) -> bytes:
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
        "Accept: */*\r\n"
    )
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + (body or b"")


class _Socket:
    """One TCP connection to the daemon, open while the ``async with`` lasts."""

    def __init__(self, host: str, port: int, token: str) -> None:
        self._host, self._port, self._token = host, port, token
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def _open(self) -> None:
        self._reader, self._writer = await asyncio.open_connection(self._host, self._port)

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._writer is not None:
            self._writer.close()


class Connection(_Socket):
    """One keep-alive connection for requests whose answers carry a ``Content-Length``."""

    async def __aenter__(self) -> Connection:
        await self._open()
        return self

    async def send(self, method: str, path: str, body: object | None = None) -> Answer:
        assert self._reader is not None and self._writer is not None
        payload = None if body is None else orjson.dumps(body)
        self._writer.write(_request(method, self._host, path, self._token, payload))
        status, headers = await _head(self._reader)
        if b"content-length" not in headers:
            raise ProtocolError(f"{method} {path}: answer without Content-Length")
        return Answer(status, await self._reader.readexactly(int(headers[b"content-length"])))


class EventStream(_Socket):
    """``GET …/events`` read until one turn's ``turn_finished``: chunks are scanned as bytes and
    only the finishing event is decoded."""

    def __init__(self, host: str, port: int, token: str, path: str) -> None:
        super().__init__(host, port, token)
        self._path = path
        self._buffer = b""

    async def __aenter__(self) -> EventStream:
        await self._open()
        assert self._reader is not None and self._writer is not None
        self._writer.write(_request("GET", self._host, self._path, self._token, None))
        status, headers = await _head(self._reader)
        if status != 200 or headers.get(b"transfer-encoding") != b"chunked":
            raise ProtocolError(f"events: {status} {headers!r}")
        return self

    async def _chunk(self) -> bytes:
        assert self._reader is not None
        size = int((await self._reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            raise ProtocolError("events: the stream ended")
        data = await self._reader.readexactly(size + 2)
        return data[:-2]

    async def turn_finished(self, turn_id: str) -> dict[str, object]:
        """The ``update`` of ``turn_id``'s ``turn_finished`` event."""
        marker = turn_id.encode()
        while True:
            # sse-starlette ends lines with CRLF; a pair split across chunks joins in the buffer
            self._buffer = (self._buffer + await self._chunk()).replace(b"\r\n", b"\n")
            *events, self._buffer = self._buffer.split(b"\n\n")
            for event in events:
                if _FINISHED not in event or marker not in event:
                    continue
                for line in event.split(b"\n"):
                    if line.startswith(b"data:"):
                        data = orjson.loads(line[5:])
                        if data.get("turnId") == turn_id:
                            update = data["update"]
                            assert isinstance(update, dict)
                            if update.get("type") == "turn_finished":
                                return update
