"""Degradation rules with real PostgreSQL fault injection (session-runtime.md §3, §11; storage.md
§3): persist, then advance — a write that fails stops what depends on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.session.errors import TurnNotRecorded
from openwork_core.session.input import TextInput
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import TurnStatus
from tests.support import store_rows
from tests.support.faults import fail_writes
from tests.support.runtime import runtime


def _write_then_answer() -> list[ScriptedResponse]:
    return [
        ScriptedResponse(tool_calls=(("c1", "write", {"path": "out.txt", "content": "x\n"}),)),
        ScriptedResponse(text="written"),
    ]


async def test_a_turn_row_that_cannot_be_written_is_not_accepted_and_makes_no_model_call(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§11 with the ownership issue's rule (acknowledged = durable): the turn row and the user
    message commit before the turn is accepted; when they cannot, ``StartTurn`` answers
    ``persistence_error``, no turn exists and no model call is made."""
    model = ScriptedModel([ScriptedResponse(text="never")])
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        await fail_writes(store, "turns")
        with pytest.raises(TurnNotRecorded) as refused:
            await rt.core.start_turn(sid, client_request_id="r1", inputs=[TextInput(text="hi")])
        assert refused.value.code == "persistence_error"
        assert await store.get_turn_by_client_request(sid, "r1") is None
        assert await store.list_messages(sid, after_sequence=0, limit=10) == []
    assert model.requests == []


async def test_an_assistant_message_that_cannot_be_written_runs_no_tool(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§4 invariant 1: if the assistant write fails, no tool runs."""
    model = ScriptedModel(_write_then_answer())
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        await fail_writes(store, "messages", when="NEW.role = 'assistant'")
        turn_id, _ = await rt.run_turn(sid, "write it")
        view = await rt.core.turn_view(sid, turn_id)
        assert (view.status, view.error_code) == (TurnStatus.FAILED, "persistence_error")
        assert not (rt.workspace / "out.txt").exists()
    assert len(model.requests) == 1


async def test_a_tool_result_that_cannot_be_written_stops_before_the_next_model_call(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§4 invariant 3: the next model call starts only after the result is persisted."""
    model = ScriptedModel(_write_then_answer())
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        await fail_writes(store, "messages", when="NEW.role = 'tool'")
        turn_id, _ = await rt.run_turn(sid, "write it")
        view = await rt.core.turn_view(sid, turn_id)
        assert (view.status, view.error_code) == (TurnStatus.FAILED, "persistence_error")
        assert (rt.workspace / "out.txt").read_text() == "x\n", "the tool itself ran"
    assert len(model.requests) == 1


async def test_trace_writes_that_all_fail_never_change_the_outcome(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§4 invariant 6 and §11 (untested in the original): trace failures only count drops."""
    model = ScriptedModel(_write_then_answer())
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        await fail_writes(store, "trace_spans", operations="INSERT OR UPDATE")
        turn_id, _ = await rt.run_turn(sid, "write it")
        view = await rt.core.turn_view(sid, turn_id)
        assert (view.status, view.final_text) == (TurnStatus.COMPLETED, "written")
        await rt.core.trace.flushed()
        assert rt.core.trace.dropped_signals >= 2
    async with store.pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM trace_spans") == 0


async def test_model_call_spans_are_recorded_and_restart_marks_running_ones_unknown(
    store: PostgresStore, tmp_path: Path
) -> None:
    """storage.md §2–§3: one model_call span per submission; restart → outcome_unknown."""
    model = ScriptedModel(_write_then_answer())
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        turn_id, _ = await rt.run_turn(sid, "write it")
        await rt.core.trace.flushed()
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT kind, status, trace_id FROM trace_spans WHERE kind = 'model_call' ORDER BY started_at"
        )
        assert [(r["kind"], r["status"], r["trace_id"]) for r in rows] == [
            ("model_call", "succeeded", turn_id),
            ("model_call", "succeeded", turn_id),
        ]
    # a turn the daemon was running when it died, with a span still open: the next daemon's
    # restart correction (``PostgresOwnership.register``) interrupts it and marks the span
    await store_rows.start_turn(
        store.pool,
        session_id=sid,
        turn_id="t-stale",
        client_request_id="c-stale",
        provider_id="p",
        model_name="m",
        app_version="test",
        messages=[],
    )
    async with store.pool.acquire() as conn:
        await conn.execute(
            """INSERT INTO trace_spans (id, trace_id, session_id, turn_id, kind, name, status)
               VALUES ('stale', 't-stale', $1, 't-stale', 'tool_call', 'x', 'running')""",
            sid,
        )
    assert await store_rows.restart_correction(store.pool, tmp_path) == 1
    async with store.pool.acquire() as conn:
        row = await conn.fetchrow("SELECT status, error_code FROM trace_spans WHERE id = 'stale'")
    assert (row["status"], row["error_code"]) == ("outcome_unknown", "process_restart")


async def test_killed_database_connections_are_replaced_and_no_turn_is_torn(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§11 with connection-level fault injection: every other pooled backend is terminated by
    the server while the model streams; the pool replaces the dead connections, the turn's
    writes land, nothing is torn, and the next turn on the same session runs normally."""
    from collections.abc import AsyncIterator

    from openwork_core.models.adapters.scripted import scripted_events
    from openwork_core.models.port import ModelEvent, ModelRequest

    async def terminate_backends_then_answer(_request: ModelRequest) -> AsyncIterator[ModelEvent]:
        async with store.pool.acquire() as conn:
            await conn.execute(
                """SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                   WHERE datname = current_database() AND pid <> pg_backend_pid()"""
            )
        for event in scripted_events(ScriptedResponse(text="answered")):
            yield event

    model = ScriptedModel([terminate_backends_then_answer, ScriptedResponse(text="recovered")])
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        first, _ = await rt.run_turn(sid, "one")
        view = await rt.core.turn_view(sid, first)
        assert (view.status, view.final_text) == (TurnStatus.COMPLETED, "answered")
        second, _ = await rt.run_turn(sid, "two")
        after = await rt.core.turn_view(sid, second)
        assert (after.status, after.final_text) == (TurnStatus.COMPLETED, "recovered")
    rows = await store_rows.session_messages(store.pool, sid)
    assert [m.sequence for m in rows] == list(range(1, len(rows) + 1)), "no gap, nothing torn"
