"""The trace writer's flush (``GET …/trace`` reads after it): what was queued is written at once,
however long the batch window, and without a running writer the flush does not wait."""

from __future__ import annotations

import asyncio

from openwork_core.ids import SessionId
from openwork_core.session.trace import TraceRecorder
from openwork_core.storage.memory import InMemorySpanSink
from openwork_core.storage.trace_records import SpanClosed, SpanKind, SpanStatus

BOUND_S = 5


def _open(recorder: TraceRecorder, name: str) -> str:
    return recorder.open_span(
        kind=SpanKind.TOOL_CALL,
        name=name,
        trace_id="trace-1",
        session_id=SessionId("ses_flush"),
        turn_id=None,
    )


async def test_a_flush_writes_what_was_queued_before_the_window_ends() -> None:
    sink = InMemorySpanSink()
    recorder = TraceRecorder(sink, linger_s=3600)
    recorder.start()
    try:
        span = _open(recorder, "read")
        recorder.close_span(SpanClosed(span_id=span, status=SpanStatus.SUCCEEDED))
        async with asyncio.timeout(BOUND_S):
            await recorder.flushed()
        assert list(sink.opened) == [span]
        assert sink.closed[span].status is SpanStatus.SUCCEEDED
    finally:
        await recorder.close()


async def test_a_flush_without_a_running_writer_returns_at_once() -> None:
    never_started = TraceRecorder(InMemorySpanSink())
    closed = TraceRecorder(InMemorySpanSink())
    closed.start()
    await closed.close()
    async with asyncio.timeout(BOUND_S):
        await never_started.flushed()
        await closed.flushed()
