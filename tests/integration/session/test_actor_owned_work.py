"""The actor never waits on long work, and a dead actor never sticks (issue 23 point 7, issue 22
point 7): a manual compaction and a rewind run as the actor's own tasks — status, snapshots and
subscriptions answer meanwhile, the session is busy until they end; an actor whose loop stopped
by itself is rebuilt on the next command and ``unload_idle`` works on."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import httpx

from openwork_core.models.adapters.scripted import (
    ScriptedModel,
    ScriptedResponse,
    scripted_events,
)
from openwork_core.models.port import ModelEvent, ModelRequest
from openwork_core.session.input import TextInput
from openwork_core.session.outcome import Cancelled
from openwork_core.session.updates import TurnFinished
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import TurnStatus
from tests.support import store_rows
from tests.support.live_app import live_app
from tests.support.runtime import runtime
from tests.support.sse import open_events
from tests.unit.compaction.compaction_support import valid_summary

BOUND_S = 10
"""How long any one answer may take (each wait is bounded; none sleeps)."""


def _held_summary(release: asyncio.Event):  # type: ignore[no-untyped-def]
    """A summary call that answers only once the test releases it."""

    async def step(_request: ModelRequest) -> AsyncIterator[ModelEvent]:
        await release.wait()
        for event in scripted_events(ScriptedResponse(text=valid_summary())):
            yield event

    return step


async def _answers_while_busy(client: httpx.AsyncClient, sid: str, kind: str) -> None:
    """``GET`` the session (its live snapshot), subscribe, and ask for another compaction: each
    answers within the bound; the session is busy with ``kind``."""
    async with asyncio.timeout(BOUND_S):
        session = await client.get(f"/v1/sessions/{sid}")
    assert session.status_code == 200, session.text
    assert session.json()["snapshot"]["sessionId"] == sid
    async with open_events(client, f"/v1/sessions/{sid}/events", timeout=BOUND_S):
        pass  # subscribed: the route answered its head after the actor's Subscribe
    async with asyncio.timeout(BOUND_S):
        again = await client.post(f"/v1/sessions/{sid}/compact")
    _refused(again, kind)


def _refused(response: httpx.Response, kind: str) -> None:
    assert response.status_code == 409, response.text
    error = response.json()["error"]
    assert error["code"] == "session_active"
    assert kind in error["message"]


async def _kinds(client: httpx.AsyncClient, sid: str) -> list[str]:
    listed = (await client.get(f"/v1/sessions/{sid}/compactions")).json()["compactions"]
    return [c["kind"] for c in reversed(listed)]


async def test_the_session_answers_while_a_manual_compaction_waits_on_its_summary_call(
    store: PostgresStore, tmp_path: Path
) -> None:
    """Issue 23 point 7: while the summary call of ``POST …/compact`` is held by the provider,
    ``GET /v1/sessions/{sid}`` (the live snapshot) and ``…/events`` answer, a second compaction
    and a turn are refused with 409 ``session_active``; released, the compaction answers and its
    checkpoint is persisted, and the next turn runs."""
    release = asyncio.Event()
    model = ScriptedModel(
        [ScriptedResponse(text="one"), _held_summary(release), ScriptedResponse(text="two")]
    )
    async with (
        runtime(store, tmp_path, model) as rt,
        live_app(rt.core) as app,
        app.client() as client,
    ):
        sid = await rt.new_session()
        await rt.run_turn(sid, "first request, long enough to be worth a summary " * 20)
        compaction = asyncio.ensure_future(client.post(f"/v1/sessions/{sid}/compact"))
        await model.wait_for_requests(2, timeout=BOUND_S)
        await _answers_while_busy(client, sid, "manual compaction")
        async with asyncio.timeout(BOUND_S):
            turn = await client.post(
                f"/v1/sessions/{sid}/turns",
                json={"client_request_id": "busy", "input": [{"type": "text", "text": "x"}]},
            )
        _refused(turn, "manual compaction")
        assert not compaction.done()
        release.set()
        async with asyncio.timeout(BOUND_S):
            compacted = await compaction
        assert compacted.status_code == 200, compacted.text
        assert await _kinds(client, sid) == ["manual"]
        turn_id, _ = await rt.run_turn(sid, "after the compaction")
        assert (await rt.core.turn_view(sid, turn_id)).final_text == "two"


async def _blocked_on_a_lock(watcher: asyncpg.Connection) -> None:
    """Until a backend of this database waits on a lock (the rewind's checkpoint write)."""
    async with asyncio.timeout(BOUND_S):
        while not await watcher.fetchval(
            "SELECT count(*) > 0 FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ):
            pass


async def test_the_session_answers_while_a_rewind_waits_on_the_database(
    store: PostgresStore, database_url: str, tmp_path: Path
) -> None:
    """Issue 23 point 7: a rewind makes no model call but reads, writes and installs a whole
    projection; while its checkpoint write waits on the session's row lock (held here, as a slow
    database would), the session answers and is busy (a turn's start waits on that row too, so
    only the compaction test asks for one); released, the rewind is persisted."""
    model = ScriptedModel([ScriptedResponse(text="one"), ScriptedResponse(text=valid_summary())])
    async with (
        runtime(store, tmp_path, model) as rt,
        live_app(rt.core) as app,
        app.client() as client,
    ):
        sid = await rt.new_session()
        await rt.run_turn(sid, "first request, long enough to be worth a summary " * 20)
        first = (await client.post(f"/v1/sessions/{sid}/compact")).json()["compaction_id"]
        holder, watcher = [await asyncpg.connect(database_url) for _ in range(2)]
        try:
            lock = holder.transaction()
            await lock.start()
            await holder.execute("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", sid)
            rewind = asyncio.ensure_future(
                client.post(f"/v1/sessions/{sid}/rewind", json={"compaction_id": first})
            )
            await _blocked_on_a_lock(watcher)
            await _answers_while_busy(client, sid, "rewind")
            assert not rewind.done()
        finally:
            await holder.close()  # the lock goes with its connection
            await watcher.close()
        async with asyncio.timeout(BOUND_S):
            rewound = await rewind
        assert rewound.status_code == 200, rewound.text
        assert await _kinds(client, sid) == ["manual", "rewind"]


async def test_stopping_the_session_ends_its_manual_compaction_and_answers_actor_stopped(
    store: PostgresStore, tmp_path: Path
) -> None:
    """Issue 23 point 7: the actor owns the compaction's task like a turn's: unloading the
    session cancels the held summary call, and the caller gets ``actor_stopped``, not silence;
    nothing was persisted."""
    release = asyncio.Event()  # never set: only the stop ends the call
    model = ScriptedModel([ScriptedResponse(text="one"), _held_summary(release)])
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        await rt.run_turn(sid, "first request, long enough to be worth a summary " * 20)
        compaction = asyncio.ensure_future(rt.core.compact(sid))
        await model.wait_for_requests(2, timeout=BOUND_S)
        async with asyncio.timeout(BOUND_S):
            await rt.core.sessions.close(sid)
            error = await asyncio.gather(compaction, return_exceptions=True)
        assert [type(e).__name__ for e in error] == ["ActorStopped"]
        assert await store_rows.session_messages(
            store.pool, sid
        )  # the conversation is all still there
        async with store.pool.acquire() as conn:
            count = await conn.fetchval(
                "SELECT count(*) FROM conversation_compactions WHERE session_id = $1", sid
            )
        assert count == 0


async def _kill_actor(sid: str) -> None:
    """Stop the actor's loop from outside, as a crash would (its task cancelled)."""
    (task,) = [t for t in asyncio.all_tasks() if t.get_name() == f"session-{sid}"]
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        async with asyncio.timeout(BOUND_S):
            await task


async def test_an_actor_that_stopped_by_itself_is_rebuilt_on_the_next_command(
    store: PostgresStore, tmp_path: Path
) -> None:
    """Issue 22 point 7: a session whose actor's loop died is not served by its dead handle:
    reads fall back to the database, the next turn builds a new actor and runs, and
    ``unload_idle`` unloads it with the other sessions instead of failing for all of them."""
    model = ScriptedModel([ScriptedResponse(text=t) for t in ("a", "b", "again")])
    async with runtime(store, tmp_path, model) as rt:
        sessions = rt.core.sessions
        crashed, other = await rt.new_session(), await rt.new_session()
        await rt.run_turn(crashed, "a")
        await rt.run_turn(other, "b")
        await _kill_actor(crashed)
        assert sessions.get(crashed) is None
        assert (await rt.core.snapshot(crashed)).runtime.state == "idle"
        turn_id, _ = await rt.run_turn(crashed, "again")
        assert (await rt.core.turn_view(crashed, turn_id)).final_text == "again"
        await _kill_actor(crashed)
        far = time.monotonic() + 10_000
        assert sorted(await sessions.unload_idle(now=far)) == sorted([crashed, other])
        assert sessions.held_leases() == {}


async def test_an_actor_that_dies_mid_turn_ends_the_turn_before_a_new_one_is_built(
    store: PostgresStore, tmp_path: Path
) -> None:
    """Issue 22 point 7: the dying loop still ends the work it owns — its running turn ends
    ``cancelled`` and is reported — so the rebuilt actor is the session's only writer."""
    release = asyncio.Event()  # never set: only the actor's end stops the call

    async def held(_request: ModelRequest) -> AsyncIterator[ModelEvent]:
        await release.wait()
        for event in scripted_events(ScriptedResponse(text="never")):
            yield event

    model = ScriptedModel([held, ScriptedResponse(text="after")])
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        _, watching = await rt.core.subscribe(sid, None)
        accepted = await rt.core.start_turn(
            sid, client_request_id="r1", inputs=[TextInput(text="x")]
        )
        await model.wait_for_requests(1, timeout=BOUND_S)
        await _kill_actor(sid)
        async with asyncio.timeout(BOUND_S):
            while not isinstance((envelope := await watching.queue.get()).update, TurnFinished):
                pass
        assert envelope.turn_id == accepted.turn_id
        assert isinstance(envelope.update, TurnFinished)
        assert envelope.update.outcome == Cancelled()
        view = await rt.core.turn_view(sid, accepted.turn_id)
        assert view.status is TurnStatus.CANCELLED
        turn_id, _ = await rt.run_turn(sid, "after the crash")
        assert (await rt.core.turn_view(sid, turn_id)).final_text == "after"
