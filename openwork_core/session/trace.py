"""TraceRecorder: best-effort spans on a side channel (session-runtime.md §1, §11). Writes go
through a bounded queue to one writer task; a full queue or a database error drops the signal and
counts it — the turn never waits for, or depends on, a trace write."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import asyncpg
import structlog
from pydantic import JsonValue

from openwork_core.ids import MessageId, SessionId, SpanId, TurnId, new_span_id
from openwork_core.storage.postgres import traces

log = structlog.get_logger(__name__)
_QUEUE_CAPACITY = 1024

Write = Callable[[asyncpg.Pool], Awaitable[None]]


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(slots=True)
class SpanFinish:
    status: str
    error_code: str | None = None
    error_message: str | None = None
    attributes: dict[str, JsonValue] = field(default_factory=dict)
    input_tokens: int | None = None
    output_tokens: int | None = None
    resolved_tool_name: str | None = None
    response_message_id: MessageId | None = None


@dataclass(frozen=True, slots=True)
class _OpenSpan:
    kind: str
    name: str
    model_id: str | None
    started: float


_SPAN_EVENTS = {"model_call": "model.call", "tool_call": "tool.call", "compaction": "compaction"}


def _log_span(span: _OpenSpan, finish: SpanFinish) -> None:
    """One log line per model call (provider, model, latency, tokens), tool call and compaction;
    the session and turn ids come from the bound contextvars. Never arguments or outputs."""
    event = _SPAN_EVENTS.get(span.kind, f"span.{span.kind}")
    fields: dict[str, JsonValue] = {
        "name": span.name,
        "status": finish.status,
        "duration_ms": int((time.monotonic() - span.started) * 1000),
    }
    if span.model_id is not None:
        provider, _, model = span.model_id.partition("/")
        fields |= {"provider": provider, "model": model}
    if finish.input_tokens is not None or finish.output_tokens is not None:
        fields |= {"input_tokens": finish.input_tokens, "output_tokens": finish.output_tokens}
    if finish.resolved_tool_name is not None:
        fields["tool"] = finish.resolved_tool_name
    if finish.error_code is not None:
        fields["error_code"] = finish.error_code
    (log.warning if finish.status == "failed" else log.info)(event, **fields)


class TraceRecorder:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool
        self._queue: asyncio.Queue[Write | None] = asyncio.Queue(_QUEUE_CAPACITY)
        self._task: asyncio.Task[None] | None = None
        self.dropped_signals = 0
        self._open: dict[str, _OpenSpan] = {}

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="trace-writer")

    async def close(self, timeout: float = 5) -> None:  # noqa: ASYNC109 - bounded drain
        if self._task is None:
            return
        with contextlib.suppress(asyncio.QueueFull):
            self._queue.put_nowait(None)
        try:
            async with asyncio.timeout(timeout):
                await self._task
        except TimeoutError:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            write = await self._queue.get()
            if write is None:
                return
            try:
                await write(self._pool)
            except Exception as exc:  # best effort: count and go on
                self.dropped_signals += 1
                log.warning("trace.write_failed", error=str(exc), dropped=self.dropped_signals)

    def _offer(self, write: Write) -> None:
        try:
            self._queue.put_nowait(write)
        except asyncio.QueueFull:
            self.dropped_signals += 1

    def open_span(
        self,
        *,
        kind: str,
        name: str,
        trace_id: str,
        session_id: SessionId,
        turn_id: TurnId | None,
        parent_span_id: SpanId | None = None,
        model_id: str | None = None,
        resolved_model_name: str | None = None,
        provider_call_id: str | None = None,
        requested_tool_name: str | None = None,
    ) -> SpanId:
        span_id = new_span_id()
        started_at = _now()
        self._open[span_id] = _OpenSpan(kind, name, model_id, time.monotonic())

        async def write(pool: asyncpg.Pool) -> None:
            async with pool.acquire() as conn:
                await traces.insert_span(
                    conn,
                    span_id=span_id,
                    trace_id=trace_id,
                    session_id=session_id,
                    turn_id=turn_id,
                    parent_span_id=parent_span_id,
                    kind=kind,
                    name=name,
                    started_at=started_at,
                    model_id=model_id,
                    resolved_model_name=resolved_model_name,
                    provider_call_id=provider_call_id,
                    requested_tool_name=requested_tool_name,
                )

        self._offer(write)
        return span_id

    def close_span(self, span_id: SpanId, finish: SpanFinish) -> None:
        ended_at = _now()
        opened = self._open.pop(span_id, None)
        if opened is not None:
            _log_span(opened, finish)

        async def write(pool: asyncpg.Pool) -> None:
            async with pool.acquire() as conn:
                await traces.finish_span(
                    conn,
                    span_id=span_id,
                    status=finish.status,
                    ended_at=ended_at,
                    error_code=finish.error_code,
                    error_message=finish.error_message,
                    attributes=finish.attributes,
                    input_tokens=finish.input_tokens,
                    output_tokens=finish.output_tokens,
                    resolved_tool_name=finish.resolved_tool_name,
                    response_message_id=finish.response_message_id,
                )

        self._offer(write)

    async def flushed(self) -> None:
        """Wait until everything queued so far was attempted (tests and shutdown)."""
        done = asyncio.get_running_loop().create_future()

        async def marker(_pool: asyncpg.Pool) -> None:
            done.set_result(None)

        await self._queue.put(marker)
        await done
