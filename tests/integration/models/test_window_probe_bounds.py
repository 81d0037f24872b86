"""The served-window probe against hostile local servers (issue 14 point 8; every HTTP body is
untrusted): an answer is read to at most ``MAX_ANSWER_BYTES`` and each question ends within
``PROBE_TIMEOUT_S`` whole, so a server can neither fill the daemon's memory nor hold the probe
forever by trickling bytes (httpx's own timeout is per read)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager

from openwork_core.models.window_probe import MAX_ANSWER_BYTES, probe_served_window
from tests.support.loopback_server import loopback_server

Body = Callable[[asyncio.StreamWriter], Awaitable[None]]


def _json(value: object) -> Body:
    async def write(writer: asyncio.StreamWriter) -> None:
        data = json.dumps(value).encode()
        writer.write(b"content-length: %d\r\n\r\n%s" % (len(data), data))

    return write


async def _trickle(writer: asyncio.StreamWriter) -> None:
    writer.write(b"\r\n[")
    while True:  # one byte a tenth of a second, forever: each read is well within its timeout
        await writer.drain()
        await asyncio.sleep(0.1)
        writer.write(b" ")


@asynccontextmanager
async def _server(paths: Mapping[str, Body]) -> AsyncIterator[str]:
    """HTTP/1.1 on loopback: each listed path answers 200 with its body, others 404."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode()
            path = head.split(" ", 2)[1]
            body = paths.get(path)
            if body is None:
                writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
            else:
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
                await body(writer)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async with loopback_server(answer) as url:
        yield url


async def test_a_trickling_answer_ends_within_the_probe_timeout() -> None:
    """Ollama's question trickles forever; llama.cpp's answers: the probe returns llama.cpp's
    window (on the old probe it never returned)."""
    props = {"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1}
    async with _server({"/api/show": _trickle, "/props": _json(props)}) as url:
        async with asyncio.timeout(20):
            served = await probe_served_window(url, "m", timeout_s=1.0)
    assert served is not None and (served.server, served.tokens) == ("llama.cpp", 4096)


async def test_an_answer_over_the_bound_is_not_read() -> None:
    """A 16 MiB ``/api/show`` answer (valid JSON naming a window) is abandoned at
    ``MAX_ANSWER_BYTES``, so it names nothing (the old probe read it whole and used it)."""
    show = {"parameters": "num_ctx 8192", "padding": "x" * (4 * MAX_ANSWER_BYTES)}
    async with _server({"/api/show": _json(show)}) as url:
        assert await probe_served_window(url, "m", timeout_s=10.0) is None
    small = {"parameters": "num_ctx 8192"}
    async with _server({"/api/show": _json(small)}) as url:
        served = await probe_served_window(url, "m", timeout_s=10.0)
    assert served is not None and (served.server, served.tokens) == ("ollama", 8192)
