"""TraceRecorder: best-effort spans on a side channel (session-runtime.md §1, §11). Span events go
through a bounded queue to one writer task, which gathers what arrives within ``LINGER_S`` of a
first event and writes it as one batch in one statement on its own connection (so a trace write never rolls back a business
write, storage.md §4): a span opened and closed within a batch is one finished row, a closing of an
earlier span one update. A span opened in a window and still open at its end is held for one more
window (``_Batch.hold_open``): closed by then it is one finished row too, else it is written as
running at that window's end, at most two windows after it opened. A full queue or a database
error drops the signal and counts it — the turn never waits for, or depends on, a trace write.
``close`` writes what is queued (clean shutdown); ``flushed`` waits until what was queued so far
was attempted, nothing held (a trace read, ``GET …/trace``, waits for it)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol, assert_never

import structlog
from pydantic import JsonValue

from openwork_core.ids import SessionId, SpanId, TurnId, new_span_id
from openwork_core.storage.trace_records import SpanClosed, SpanKind, SpanOpened, SpanStatus

log = structlog.get_logger(__name__)
_QUEUE_CAPACITY = 1024
BATCH_LIMIT = 256
"""At most this many span events per statement."""
LINGER_S = 0.25
"""How long the writer gathers events after the first one before it writes them: a quarter
second makes a 20-call turn's spans (model calls ~10 ms apart) one or two batches instead of one
per few calls, each batch a pool acquire and a statement on the event loop between model calls
(issue 13); a trace row is still visible within two windows (half a second; a span still running
is held for one, ``_Batch.hold_open``), and ``flushed`` waits for none."""


class SpanSink(Protocol):
    """Where the trace writer puts a batch: one write (``PostgresSpanSink``: one statement on
    a connection of its own)."""

    async def write_span_batch(
        self,
        opened: Sequence[tuple[SpanOpened, SpanClosed | None]],
        closed: Sequence[SpanClosed],
    ) -> None:
        """The spans opened since the last batch (each with its closing when that came in the
        same batch) and the closings of spans written by earlier batches."""
        ...


@dataclass(frozen=True, slots=True)
class _Flush:
    done: asyncio.Future[None]


_Event = SpanOpened | SpanClosed | _Flush


@dataclass(slots=True)
class _Batch:
    """Queued events in order: each open with its closing when it came in the same batch."""

    opened: dict[SpanId, tuple[SpanOpened, SpanClosed | None]] = field(default_factory=dict)
    closed: list[SpanClosed] = field(default_factory=list)
    flushes: list[_Flush] = field(default_factory=list)
    size: int = 0
    held: frozenset[SpanId] = frozenset()
    """Opens carried in from the previous window (``hold_open``): written with this one."""

    @classmethod
    def carrying(cls, held: list[SpanOpened]) -> _Batch:
        batch = cls(held=frozenset(o.span_id for o in held))
        for opened in held:
            batch.add(opened)
        return batch

    def hold_open(self) -> list[SpanOpened]:
        """Take out the spans opened in this window and not closed in it, to carry into the next
        one: a span that closes soon (a tool call, a model call's stream) is then one insert of
        its finished row instead of an insert now and an update later. Spans already carried
        once stay (written as running now), and nothing is held from a window with a flush."""
        if self.flushes:
            return []
        young = [
            opened
            for span_id, (opened, closing) in self.opened.items()
            if closing is None and span_id not in self.held
        ]
        for opened in young:
            del self.opened[opened.span_id]
        self.size -= len(young)
        return young

    def add(self, event: _Event) -> None:
        match event:
            case SpanOpened():
                self.opened[event.span_id] = (event, None)
                self.size += 1
            case SpanClosed():
                if event.span_id in self.opened:
                    self.opened[event.span_id] = (self.opened[event.span_id][0], event)
                else:
                    self.closed.append(event)
                self.size += 1
            case _Flush():
                self.flushes.append(event)
            case _:
                assert_never(event)


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class _OpenSpan:
    kind: SpanKind
    name: str
    model_id: str | None
    started_at: datetime


_SPAN_EVENTS = {
    SpanKind.MODEL_CALL: "model.call",
    SpanKind.TOOL_CALL: "tool.call",
    SpanKind.COMPACTION: "compaction",
}


def _log_span(span: _OpenSpan, closed: SpanClosed) -> None:
    """One log line per model call (provider, model, latency, tokens), tool call and compaction;
    the session and turn ids come from the bound contextvars. Never arguments or outputs."""
    event = _SPAN_EVENTS[span.kind]
    fields: dict[str, JsonValue] = {
        "name": span.name,
        "status": closed.status.value,
        "duration_ms": int((closed.ended_at - span.started_at).total_seconds() * 1000),
    }
    if span.model_id is not None:
        provider, _, model = span.model_id.partition("/")
        fields |= {"provider": provider, "model": model}
    if closed.input_tokens is not None or closed.output_tokens is not None:
        fields |= {"input_tokens": closed.input_tokens, "output_tokens": closed.output_tokens}
    if closed.resolved_tool_name is not None:
        fields["tool"] = closed.resolved_tool_name
    if closed.error_code is not None:
        fields["error_code"] = closed.error_code
    (log.warning if closed.status is SpanStatus.FAILED else log.info)(event, **fields)


class TraceRecorder:
    def __init__(self, sink: SpanSink, *, linger_s: float = LINGER_S) -> None:
        self._sink = sink
        self._linger_s = linger_s
        self._queue: asyncio.Queue[_Event | None] = asyncio.Queue(_QUEUE_CAPACITY)
        self._task: asyncio.Task[None] | None = None
        self.dropped_signals = 0
        self.batches_written = 0
        self.late_closings_written = 0
        """Closings of spans an earlier batch wrote as running (one ``UPDATE`` row each)."""
        self._open: dict[str, _OpenSpan] = {}

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="trace-writer")

    async def close(self, timeout: float = 5) -> None:  # noqa: ASYNC109 - bounded drain
        """Write what is queued, then stop (bounded: a dead database drops the rest)."""
        if self._task is None:
            return
        try:
            async with asyncio.timeout(timeout):
                await self._queue.put(None)
                await self._task
        except TimeoutError:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        held: list[SpanOpened] = []
        while True:
            batch = _Batch.carrying(held)
            stop = await self._collect(batch)
            held = [] if stop else batch.hold_open()
            await self._write(batch)
            for flush in batch.flushes:
                if not flush.done.done():
                    flush.done.set_result(None)
            if stop:
                return

    async def _collect(self, batch: _Batch) -> bool:
        """Wait for one event (not when spans are carried in: their window starts now), then
        gather what comes within ``LINGER_S`` (a flush, the stop or ``BATCH_LIMIT`` events end
        the window early). True when the recorder stops."""
        if not batch.size:
            first = await self._queue.get()
            if first is None:
                return True
            batch.add(first)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._linger_s):
                while batch.size < BATCH_LIMIT and not batch.flushes:
                    event = await self._queue.get()
                    if event is None:
                        return True
                    batch.add(event)
        return False

    async def _write(self, batch: _Batch) -> None:
        if not batch.size:
            return
        try:
            await self._sink.write_span_batch(list(batch.opened.values()), batch.closed)
            self.batches_written += 1
            self.late_closings_written += len(batch.closed)
        except Exception as exc:  # best effort: count and go on
            self.dropped_signals += batch.size
            log.warning("trace.write_failed", error=str(exc), dropped=self.dropped_signals)

    def _offer(self, event: SpanOpened | SpanClosed) -> None:
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            self.dropped_signals += 1

    def open_span(
        self,
        *,
        kind: SpanKind,
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
        self._open[span_id] = _OpenSpan(kind, name, model_id, started_at)
        self._offer(
            SpanOpened(
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
        )
        return span_id

    def close_span(self, closed: SpanClosed) -> None:
        opened = self._open.pop(closed.span_id, None)
        if opened is not None:
            _log_span(opened, closed)
        self._offer(closed)

    async def flushed(self) -> None:
        """Wait until everything queued so far was attempted (a trace read, and the tests); at
        once when no writer runs (not started, or closed: nothing queued will be written)."""
        if self._task is None or self._task.done():
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        await self._queue.put(_Flush(done))
        await done
