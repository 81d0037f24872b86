"""A trivially cheap scripted OpenAI-compatible Chat Completions server for ``bench/load.py``.

Run: ``python bench/fake_openai_server.py PORT LOG_PATH CALLS`` (several processes may share the
port: ``SO_REUSEPORT``). HTTP/1.1 keep-alive on raw asyncio streams, zero delay, no JSON parsing:
the answer depends only on how many tool results the request carries (bytes counted), so the
``CALLS``-th call of a turn gets the final text and every earlier one a ``read`` tool call. The
responses are pre-encoded SSE streams. It runs on uvloop. For the gap between model calls, each request's arrival
and the moment its response was written are appended to ``LOG_PATH`` with the session marker
found in the body (``load-session-<n>``)."""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import sys
import time

import orjson
import uvloop

_MARKER = re.compile(rb"load-session-(\d+)")
_RESULT = b'"tool_call_id"'


def _sse(*chunks: object) -> bytes:
    return b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def _chunk(delta: object, finish: str | None) -> dict[str, object]:
    return {
        "id": "chatcmpl-load",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "fake-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


_USAGE = {
    "id": "chatcmpl-load",
    "object": "chat.completion.chunk",
    "created": 0,
    "model": "fake-model",
    "choices": [],
    "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
}


def _tool_call(n: int) -> bytes:
    call = {
        "index": 0,
        "id": f"call_load_{n}",
        "type": "function",
        "function": {
            "name": "read",
            "arguments": orjson.dumps({"path": f"notes-{n}.txt"}).decode(),
        },
    }
    return _sse(
        _chunk({"role": "assistant", "tool_calls": [call]}, None),
        _chunk({}, "tool_calls"),
        _USAGE,
    )


_FINAL = _sse(
    _chunk({"role": "assistant", "content": "All done."}, None), _chunk({}, "stop"), _USAGE
)


def _response(body: bytes) -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nx-request-id: req_load\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )


class Server:
    def __init__(self, calls: int, log_path: str) -> None:
        self._answers = [_response(_tool_call(n)) for n in range(calls - 1)]
        self._final = _response(_FINAL)
        self._log = open(log_path, "a", buffering=1)  # noqa: SIM115 - lives as long as us

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                arrived = time.monotonic()
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                body = await reader.readexactly(length) if length else b""
                results = body.count(_RESULT)
                answer = self._answers[results] if results < len(self._answers) else self._final
                marker = _MARKER.search(body)
                session = marker.group(1).decode() if marker else "-"
                # logged before the answer leaves: on disk before the daemon sees its end
                self._log.write(f"{session} {results} {arrived:.6f} {time.monotonic():.6f}\n")
                writer.write(answer)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def close(self) -> None:
        self._log.close()


async def main(port: int, log_path: str, calls: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("127.0.0.1", port))
    server_state = Server(calls, log_path)
    server = await asyncio.start_server(server_state.serve, sock=sock, backlog=1024)
    print("ready", flush=True)
    try:
        async with server:
            await server.serve_forever()
    finally:
        server_state.close()


if __name__ == "__main__":
    # uvloop, as the daemon: the harness is not what is measured, so it takes as little CPU as it can
    with (
        contextlib.suppress(KeyboardInterrupt),  # SIGINT is how bench/load.py stops us
        asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner,
    ):
        runner.run(main(int(sys.argv[1]), sys.argv[2], int(sys.argv[3])))
