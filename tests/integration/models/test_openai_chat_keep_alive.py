"""OpenAIChatAdapter keeps its HTTP connection between model calls (issue 13): the SDK stops
reading at ``[DONE]``; the adapter reads the body's end so the connection goes back to the pool
instead of being closed, and the next call does not connect (or, over TLS, shake hands) again."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import orjson
import pytest

from openwork_chat_state.messages import user_text
from openwork_core.models.adapters.openai_chat import OpenAIChatAdapter
from openwork_core.models.port import ModelRequest
from tests.integration.models.loopback import completed, outcome

_CHUNK = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 0,
    "model": "fake-model",
    "choices": [
        {"index": 0, "delta": {"role": "assistant", "content": "hi"}, "finish_reason": None}
    ],
}
_STOP = _CHUNK | {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}


def _body() -> bytes:
    return b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in (_CHUNK, _STOP)) + (
        b"data: [DONE]\n\n"
    )


@dataclass
class KeepAliveServer:
    """Answers every request on a connection until the client closes it; counts both."""

    chunked: bool
    connections: int = 0
    requests: int = 0
    server: asyncio.Server | None = field(default=None, repr=False)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                self.requests += 1
                body = _body()
                framing = (
                    b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
                    if self.chunked
                    else b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
                )
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" + framing)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@pytest.fixture(params=[False, True], ids=["content-length", "chunked"])
async def server(request: pytest.FixtureRequest) -> AsyncIterator[KeepAliveServer]:
    state = KeepAliveServer(chunked=request.param)
    state.server = await asyncio.start_server(state.serve, "127.0.0.1", 0)
    async with state.server:
        yield state


async def test_consecutive_model_calls_reuse_one_connection(server: KeepAliveServer) -> None:
    assert server.server is not None
    port = server.server.sockets[0].getsockname()[1]
    adapter = OpenAIChatAdapter(base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-test")
    request = ModelRequest(model="fake-model", messages=(user_text("hi"),), max_output_tokens=64)
    try:
        for _ in range(3):
            events, error = await outcome(adapter, request)
            assert error is None
            assert completed(events).text == "hi"
    finally:
        await adapter.aclose()
    assert server.requests == 3
    assert server.connections == 1
