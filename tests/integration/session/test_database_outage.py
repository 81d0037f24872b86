"""A database outage mid-turn (faults issue, point 1; session-runtime.md §3, §11): connections
refused and the open ones terminated (``ALTER DATABASE … ALLOW_CONNECTIONS false``) exactly when
the runner writes World State, the assistant message, a tool result, or a checkpoint. The turn
ends ``failed`` / ``persistence_error`` at once in memory (the snapshot and the stream agree), the
terminal state reaches the database as soon as it answers again, and the next turn works without
a restart."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import Role
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.session.compaction.errors import CheckpointRejected
from openwork_core.session.input import TextInput
from openwork_core.session.storage import StepWrite
from openwork_core.session.updates import TurnFinished
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import TurnStatus
from tests.support import store_rows
from tests.support.faults import Outage
from tests.support.postgres import PgCluster
from tests.support.runtime import Runtime, runtime
from tests.unit.compaction.compaction_support import valid_summary


def _cut_on(outage: Outage, write: Callable[..., Awaitable[Any]], when: Callable[..., bool]):  # type: ignore[no-untyped-def]
    """Wrap a storage write: the first call matching ``when`` starts the outage, then writes."""
    fired: list[bool] = []

    async def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not fired and when(*args, **kwargs):
            fired.append(True)
            await outage.begin()
        return await write(*args, **kwargs)

    return wrapped


def _kinds(step: StepWrite) -> set[tuple[Role, MessageKind]]:
    return {(m.message.role, m.kind) for m in step.messages}


async def _outcome_of(rt: Runtime, sid: str, start: Callable[[], Awaitable[str]]) -> TurnFinished:
    _, subscription = await rt.core.subscribe(sid, None)
    try:
        turn_id = await start()
        async with asyncio.timeout(90):
            while True:
                envelope = await subscription.queue.get()
                if envelope.turn_id == turn_id and isinstance(envelope.update, TurnFinished):
                    return envelope.update
    finally:
        subscription.close()


@pytest.mark.parametrize("where", ["world_state", "assistant", "tool_result", "deferred_step"])
async def test_an_outage_at_a_turn_write_fails_the_turn_and_the_end_is_written_once_it_is_back(
    store: PostgresStore, tmp_path: Path, pg_cluster: PgCluster, database_url: str, where: str
) -> None:
    """``deferred_step``: the write of a response of effect-free calls with their results
    (session-runtime.md §11 for the deferred path): it fails whole, no next model call."""
    outage = Outage(pg_cluster.admin_url, database_url)
    call = (
        ("c1", "read", {"path": "AGENTS.md"})
        if where == "deferred_step"
        else ("c1", "write", {"path": "AGENTS.md", "content": "Hi\n"})
    )
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=(call,)),
            ScriptedResponse(text="after"),
            ScriptedResponse(text="next turn works"),
        ]
    )
    async with runtime(store, tmp_path, model) as rt:
        (rt.workspace / "AGENTS.md").write_text("Be brief.\n")
        sid = await rt.new_session()
        await rt.core.sessions.load(sid)
        storage = rt.services[sid].storage
        cut: dict[str, Callable[[StepWrite], bool]] = {
            "world_state": lambda step: (Role.USER, MessageKind.WORLD_STATE) in _kinds(step),
            "assistant": lambda step: step.response is not None,
            "tool_result": lambda step: (Role.TOOL, MessageKind.NORMAL) in _kinds(step),
            "deferred_step": lambda step: step.response is not None and len(step.messages) > 1,
        }
        storage.append = _cut_on(  # type: ignore[method-assign]
            outage, storage.append, lambda _turn, step: cut[where](step)
        )
        try:
            finished = await _outcome_of(
                rt,
                sid,
                lambda: _accepted(rt, sid, "first"),
            )
            assert finished.outcome.status == "failed"
            assert finished.outcome.code.value == "persistence_error"  # type: ignore[union-attr]
            snapshot = await rt.core.snapshot(sid)
            assert snapshot.runtime.state == "terminal"
        finally:
            await outage.end()
        second = await _accepted(rt, sid, "second")  # flushes the first turn's end first
        rows = {r.client_request_id: r for r in await _turns(store, sid)}
        first = rows["first"]
        assert (first.status, first.error_code) == (TurnStatus.FAILED, "persistence_error")
        if where == "deferred_step":  # nothing of the step was written
            stored = await store_rows.session_messages(store.pool, sid)
            assert not [m for m in stored if m.turn_id == first.id and m.role is not Role.USER]
            assert first.tool_call_count == 0
        _, subscription = await rt.core.subscribe(sid, None)
        subscription.close()
        view = await _settled(rt, sid, second)
        assert view.status is TurnStatus.COMPLETED
        if where == "deferred_step":  # the first turn called no model after the failed write,
            # so its "after" answered the second turn
            assert len(model.requests) == 2
            assert view.final_text == "after"


async def test_an_outage_at_the_checkpoint_write_leaves_the_session_usable(
    store: PostgresStore, tmp_path: Path, pg_cluster: PgCluster, database_url: str
) -> None:
    """A manual compaction whose checkpoint write meets the outage fails without installing
    anything; once the database is back the session compacts and runs turns again."""
    outage = Outage(pg_cluster.admin_url, database_url)
    model = ScriptedModel(
        [
            ScriptedResponse(text="one"),
            ScriptedResponse(text=valid_summary()),
            ScriptedResponse(text=valid_summary()),
            ScriptedResponse(text="two"),
        ]
    )
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        await rt.run_turn(sid, "first")
        compactions = rt.services[sid].storage.compactions
        compactions.insert_checkpoint = _cut_on(  # type: ignore[method-assign]
            outage, compactions.insert_checkpoint, lambda *a, **k: True
        )
        try:
            with pytest.raises(CheckpointRejected):
                await rt.core.compact(sid)
        finally:
            await outage.end()
        result = await rt.core.compact(sid)
        assert result.checkpoint.id
        turn_id, _ = await rt.run_turn(sid, "second")
        assert (await rt.core.turn_view(sid, turn_id)).final_text == "two"


async def _accepted(rt: Runtime, sid: str, request_id: str) -> str:
    accepted = await rt.core.start_turn(
        sid, client_request_id=request_id, inputs=[TextInput(text=request_id)]
    )
    return accepted.turn_id


async def _turns(store: PostgresStore, sid: str):  # type: ignore[no-untyped-def]
    async with store.pool.acquire() as conn:
        ids = [
            r["client_request_id"]
            for r in await conn.fetch(
                "SELECT client_request_id FROM turns WHERE session_id = $1", sid
            )
        ]
    return [await store.get_turn_by_client_request(sid, i) for i in ids]


async def _settled(rt: Runtime, sid: str, turn_id: str):  # type: ignore[no-untyped-def]
    _, subscription = await rt.core.subscribe(sid, None)
    try:
        async with asyncio.timeout(90):
            while (view := await rt.core.turn_view(sid, turn_id)).status is TurnStatus.RUNNING:
                await subscription.queue.get()
        return view
    finally:
        subscription.close()
