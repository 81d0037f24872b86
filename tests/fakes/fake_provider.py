"""A scripted model provider on loopback: OpenAI Chat Completions and Responses, Anthropic Messages.

A raw asyncio HTTP/1.1 server on 127.0.0.1 (a free port) in a background thread with its own
event loop, so it serves in-process tests and a daemon subprocess alike::

    with FakeProvider([Reply(text="hello")]) as fake:
        adapter = OpenAIChatAdapter(base_url=fake.openai_base_url, api_key="k")
        ...
        await fake.wait_for_requests(1, timeout=5)
        assert fake.violations == []

Each request takes the next step of the script (``push`` adds more); every request body is
recorded in order and checked against the protocol invariants of ``wire_invariants``.
A request with no step left is answered 500 and recorded as a violation.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import TracebackType

from tests.fakes.fake_script import (
    ErrorReply,
    Held,
    Step,
    anthropic_error_body,
    anthropic_events,
    chat_error_body,
    chat_events,
    chat_sse,
    named_sse,
    responses_events,
)
from tests.fakes.tool_rules import tool_violations
from tests.fakes.wire_invariants import (
    anthropic_violations,
    chat_violations,
    responses_violations,
)

MODEL_PATHS = ("/chat/completions", "/responses", "/messages")
"""The model endpoints; any other path (a local server's ``/props``, ``/api/show``, ``/models``
that the daemon's window probe asks) is answered 404 and neither recorded nor scripted."""

HOLD_LIMIT_S = 30.0
"""A held response gives up (the connection is cut) after this long without a release."""


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    method: str
    path: str
    headers: Mapping[str, str]
    body: Mapping[str, object]
    raw: bytes = b""
    """The body exactly as received."""
    received_at: float = 0.0
    """``time.perf_counter()`` when the whole body had arrived (before it was parsed)."""


class FakeProvider:
    """See the module docstring. Thread-safe; start/stop with ``with`` or ``start()``/``stop()``."""

    def __init__(self, script: Iterable[Step] = ()) -> None:
        self._script: deque[Step] = deque(script)
        self._requests: list[RecordedRequest] = []
        self._violations: list[str] = []
        self._changed = threading.Condition()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fake-provider")
        self._server: asyncio.Server | None = None
        self._gates: list[Held] = []
        self._answered_at: dict[int, float] = {}
        self._hung_up: set[int] = set()
        self.port = 0

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> FakeProvider:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, "127.0.0.1", 0), self._loop
        )
        self._server = future.result(timeout=10)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    def stop(self) -> None:
        with self._changed:
            for held in self._gates:
                held.gate.release()
        if self._server is not None:
            server = self._server

            async def close() -> None:
                server.close()
                tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

            asyncio.run_coroutine_threadsafe(close(), self._loop).result(timeout=10)
            self._server = None
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
        self._loop.close()

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- the test's side ---------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """For the OpenAI SDK (``…/v1``; requests go to ``/v1/chat/completions``)."""
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """For the Anthropic SDK (it appends ``/v1/messages`` itself)."""
        return self.url

    def clear(self) -> None:
        """Drop the steps not used yet (a killed daemon left its scenario half-answered)."""
        with self._changed:
            self._script.clear()

    def push(self, *steps: Step) -> None:
        with self._changed:
            self._script.extend(steps)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._changed:
            return list(self._requests)

    @property
    def bodies(self) -> list[Mapping[str, object]]:
        return [request.body for request in self.requests]

    @property
    def answered_at(self) -> dict[int, float]:
        """Request number (1-based) → ``time.perf_counter()`` when its answer was fully
        written (benchmarks: the daemon's gap is from here to the next ``received_at``)."""
        with self._changed:
            return dict(self._answered_at)

    def hung_up(self, number: int) -> bool:
        """The client closed request ``number``'s connection while its ``Held`` answer waited."""
        with self._changed:
            return number in self._hung_up

    def wait_for_hang_up_blocking(self, number: int, timeout: float) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: number in self._hung_up, timeout):
                raise TimeoutError(f"request {number} was not hung up within {timeout} s")

    async def wait_for_hang_up(self, number: int, timeout: float) -> None:
        """Wait until the client closes held request ``number``'s connection (the stream it
        was waiting on is closed: the server would stop generating)."""
        await asyncio.to_thread(self.wait_for_hang_up_blocking, number, timeout)

    @property
    def violations(self) -> list[str]:
        with self._changed:
            return list(self._violations)

    @property
    def remaining_steps(self) -> int:
        with self._changed:
            return len(self._script)

    def wait_for_requests_blocking(self, count: int, timeout: float) -> list[RecordedRequest]:
        with self._changed:
            if not self._changed.wait_for(lambda: len(self._requests) >= count, timeout):
                raise TimeoutError(
                    f"the fake provider got {len(self._requests)} requests, not {count}, "
                    f"within {timeout} s"
                )
            return list(self._requests)

    async def wait_for_requests(
        self,
        count: int,
        timeout: float,
    ) -> list[RecordedRequest]:
        """Wait (without blocking the caller's loop) until ``count`` requests arrived."""
        return await asyncio.to_thread(self.wait_for_requests_blocking, count, timeout)

    # -- the server's side -------------------------------------------------------------------
    def _record(self, request: RecordedRequest) -> tuple[int, Step | None]:
        if request.path.endswith("/messages"):
            problems = anthropic_violations(request.body)
            problems += tool_violations("anthropic", request.body)
        elif request.path.endswith("/responses"):
            problems = responses_violations(request.body)
            problems += tool_violations("responses", request.body)
        else:
            problems = chat_violations(request.body)
            problems += tool_violations("chat", request.body)
        with self._changed:
            number = len(self._requests) + 1
            self._requests.append(request)
            self._violations.extend(f"request {number}: {p}" for p in problems)
            step = self._script.popleft() if self._script else None
            if step is None:
                self._violations.append(f"request {number}: the script has no step left")
            if isinstance(step, Held):
                self._gates.append(step)
            self._changed.notify_all()
            return number, step

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await _read_request(reader)
            if request is None:
                return
            if not request.path.endswith(MODEL_PATHS):  # e.g. the daemon's window probe
                await _not_found(writer)
                return
            number, step = self._record(request)
            if isinstance(step, Held):
                released = await self._hold(reader, step, number)
                if not released:
                    return
                step = step.step
            await _answer(writer, request, step)
            with self._changed:
                self._answered_at[number] = time.perf_counter()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _hold(self, reader: asyncio.StreamReader, step: Held, number: int) -> bool:
        """Wait for the gate; ``False`` when it timed out or the client hung up first."""
        gate = asyncio.ensure_future(
            asyncio.get_running_loop().run_in_executor(None, step.gate.wait, HOLD_LIMIT_S)
        )
        eof = asyncio.ensure_future(reader.read())  # b"" once the client closes its side
        done, _ = await asyncio.wait({gate, eof}, return_when=asyncio.FIRST_COMPLETED)
        if gate in done:
            eof.cancel()
            return bool(gate.result())
        with self._changed:
            self._hung_up.add(number)
            self._changed.notify_all()
        return False


async def _read_request(reader: asyncio.StreamReader) -> RecordedRequest | None:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    raw = await reader.readexactly(length) if length else b"{}"
    received_at = time.perf_counter()
    body = json.loads(raw)
    return RecordedRequest(
        method=method,
        path=target.split("?", 1)[0],
        headers=headers,
        body=body if isinstance(body, dict) else {"_": body},
        raw=raw,
        received_at=received_at,
    )


async def _not_found(writer: asyncio.StreamWriter) -> None:
    data = b'{"error": {"message": "not found", "type": "not_found"}}'
    headers = {"Content-Type": "application/json", "Content-Length": str(len(data))}
    writer.write(_head(404, headers) + data)
    await writer.drain()


def _head(status: int, headers: Mapping[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} FAKE"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join([*lines, "Connection: close", "", ""])).encode()


async def _answer(
    writer: asyncio.StreamWriter, request: RecordedRequest, step: Step | None
) -> None:
    anthropic = request.path.endswith("/messages")
    if step is None:
        step = ErrorReply(status=500, code="fake_script_exhausted", message="no step left")
    assert not isinstance(step, Held)
    if isinstance(step, ErrorReply):
        body = json.dumps(anthropic_error_body(step) if anthropic else chat_error_body(step))
        data = body.encode()
        headers = {"Content-Type": "application/json", "Content-Length": str(len(data))}
        headers.update(dict(step.headers))
        headers.setdefault("x-request-id", "req_fake_error")
        writer.write(_head(step.status, headers) + data)
        await writer.drain()
        return
    model = str(request.body.get("model", "fake-model"))
    if step.input_tokens is None:
        step = dataclasses.replace(step, input_tokens=-(-len(request.raw) // 4))
    chunks: Iterator[bytes]
    if anthropic:
        chunks = named_sse(anthropic_events(step, model))
    elif request.path.endswith("/responses"):
        include = request.body.get("include")
        included = tuple(str(i) for i in include) if isinstance(include, list) else ()
        chunks = named_sse(responses_events(step, model, included))
    else:
        options = request.body.get("stream_options")
        include_usage = isinstance(options, Mapping) and bool(options.get("include_usage"))
        chunks = chat_sse(chat_events(step, model, include_usage), done=step.ending != "break")
    headers = {
        "Content-Type": "text/event-stream",
        "Transfer-Encoding": "chunked",
        "x-request-id": "req_fake",
        "request-id": "req_fake",
    }
    writer.write(_head(200, headers))
    for chunk in chunks:
        writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        await writer.drain()
    if step.ending == "break":
        writer.transport.abort()  # no terminating chunk: the client sees a cut connection
        return
    writer.write(b"0\r\n\r\n")
    await writer.drain()
