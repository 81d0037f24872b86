"""The batched trace writer (issue 13, point 2; session-runtime.md §11, storage.md §4): spans are
written off the hot path in batches, still reach the database with their final state, survive a
clean shutdown, and a failing batch never touches business writes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from openwork_core.ids import SessionId
from openwork_core.session import trace
from openwork_core.session.trace import TraceRecorder
from openwork_core.storage.postgres import traces
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.postgres.traces import PostgresSpanSink
from openwork_core.storage.trace_records import SpanClosed, SpanKind, SpanStatus
from openwork_tools.modes import SandboxMode

SID = SessionId("ses_trace_batches")


@pytest.fixture
async def session(store: PostgresStore) -> None:
    await store.create_session(
        session_id=SID,
        working_directory="/tmp",
        agent="default",
        provider_id=None,
        model_name=None,
        sandbox_mode=SandboxMode.AUTO,
    )


async def _spans(store: PostgresStore) -> list[tuple[str, str, str | None]]:
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT name, status, error_code FROM trace_spans ORDER BY started_at, name"
        )
    return [(r["name"], r["status"], r["error_code"]) for r in rows]


def _open(recorder: TraceRecorder, name: str, session_id: SessionId = SID) -> str:
    return recorder.open_span(
        kind=SpanKind.TOOL_CALL, name=name, trace_id="trace-1", session_id=session_id, turn_id=None
    )


@pytest.mark.usefixtures("session")
async def test_spans_queued_before_a_clean_shutdown_reach_the_database(
    store: PostgresStore,
) -> None:
    """A linger far longer than the test: only ``close`` can have written them."""
    recorder = TraceRecorder(PostgresSpanSink(store.pool), linger_s=3600)
    recorder.start()
    first = _open(recorder, "a")
    _open(recorder, "b")
    recorder.close_span(SpanClosed(span_id=first, status=SpanStatus.SUCCEEDED))
    await recorder.close()
    assert await _spans(store) == [("a", "succeeded", None), ("b", "running", None)]
    assert (recorder.batches_written, recorder.dropped_signals) == (1, 0)


@pytest.mark.usefixtures("session")
async def test_a_span_opened_and_closed_in_one_batch_is_one_finished_row(
    store: PostgresStore,
) -> None:
    recorder = TraceRecorder(PostgresSpanSink(store.pool), linger_s=3600)
    recorder.start()
    span = _open(recorder, "tool")
    recorder.close_span(
        SpanClosed(span_id=span, status=SpanStatus.FAILED, error_code="tool_failed")
    )
    await recorder.flushed()
    assert await _spans(store) == [("tool", "failed", "tool_failed")]
    assert recorder.batches_written == 1
    await recorder.close()


@pytest.mark.usefixtures("session")
async def test_a_span_closed_in_a_later_batch_is_updated_in_place(store: PostgresStore) -> None:
    recorder = TraceRecorder(PostgresSpanSink(store.pool), linger_s=0)
    recorder.start()
    spans = [_open(recorder, f"span-{i}") for i in range(3)]
    await recorder.flushed()
    assert [s[1] for s in await _spans(store)] == ["running"] * 3
    for span in spans:
        recorder.close_span(SpanClosed(span_id=span, status=SpanStatus.CANCELLED))
    await recorder.close()
    assert await _spans(store) == [(f"span-{i}", "cancelled", None) for i in range(3)]


@pytest.mark.usefixtures("session")
async def test_a_failing_batch_is_dropped_and_counted_and_the_next_one_is_written(
    store: PostgresStore,
) -> None:
    """A span of an unknown session (a foreign key) fails its batch: counted as dropped, the
    writer goes on (trace writes are best effort, storage.md §4)."""
    recorder = TraceRecorder(PostgresSpanSink(store.pool), linger_s=0)
    recorder.start()
    _open(recorder, "orphan", SessionId("ses_unknown"))
    await recorder.flushed()
    assert recorder.dropped_signals == 1
    _open(recorder, "fine")
    await recorder.close()
    assert await _spans(store) == [("fine", "running", None)]


class _Batches:
    """Each batch the writer writes (through the real statement), announced to the test."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.written: list[tuple[list[str], list[str]]] = []
        self._changed = asyncio.Event()
        real = traces.write_span_batch

        async def write(conn: Conn, opened: list[Any], closed: list[SpanClosed]) -> None:
            await real(conn, opened, closed)
            self.written.append(([o.name for o, _ in opened], [c.span_id for c in closed]))
            self._changed.set()

        monkeypatch.setattr(traces, "write_span_batch", write)

    async def count(self, n: int) -> None:
        async with asyncio.timeout(10):
            while len(self.written) < n:
                self._changed.clear()
                await self._changed.wait()


@pytest.mark.usefixtures("session")
async def test_a_span_still_open_at_its_windows_end_and_closed_in_the_next_is_one_finished_row(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows end at three events here (no timer): the open span is held out of the first
    window's statement and written once, finished, by the second."""
    monkeypatch.setattr(trace, "BATCH_LIMIT", 3)
    batches = _Batches(monkeypatch)
    recorder = TraceRecorder(PostgresSpanSink(store.pool), linger_s=3600)
    recorder.start()
    held = _open(recorder, "held")
    quick = _open(recorder, "quick")
    recorder.close_span(SpanClosed(span_id=quick, status=SpanStatus.SUCCEEDED))
    await batches.count(1)
    assert await _spans(store) == [("quick", "succeeded", None)]
    recorder.close_span(SpanClosed(span_id=held, status=SpanStatus.SUCCEEDED))
    _open(recorder, "next")
    await batches.count(2)
    assert await _spans(store) == [("held", "succeeded", None), ("quick", "succeeded", None)]
    await recorder.close()
    assert await _spans(store) == [
        ("held", "succeeded", None),
        ("quick", "succeeded", None),
        ("next", "running", None),
    ]
    assert (recorder.late_closings_written, recorder.dropped_signals) == (0, 0)


@pytest.mark.usefixtures("session")
async def test_a_span_still_open_after_a_second_window_is_written_running_without_new_events(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long tool call: held for one window, then written as running by the carried window's
    own timer (no later event needed), and its closing is an update."""
    batches = _Batches(monkeypatch)
    recorder = TraceRecorder(PostgresSpanSink(store.pool), linger_s=0)
    recorder.start()
    span = _open(recorder, "long")
    await batches.count(1)
    assert await _spans(store) == [("long", "running", None)]
    recorder.close_span(SpanClosed(span_id=span, status=SpanStatus.CANCELLED))
    await recorder.close()
    assert await _spans(store) == [("long", "cancelled", None)]
    assert recorder.late_closings_written == 1
    assert batches.written == [(["long"], []), ([], [span])]
