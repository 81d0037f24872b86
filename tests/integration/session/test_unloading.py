"""Weeks of uptime (faults issue, point 6): idle sessions are unloaded after
``OPENWORK_SESSION_IDLE_SECONDS`` and beyond ``OPENWORK_MAX_LOADED_SESSIONS`` (least recently used
first), never one with a running turn, a pending approval or a client watching it; reading a
session never loads its actor; an unloaded session loads again from the database with its whole
Conversation (session-runtime.md §1, §9)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.session.input import TextInput
from openwork_core.session.registry import LoadLimits
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import TurnStatus
from tests.support.runtime import runtime


def _held(release: asyncio.Event):  # type: ignore[no-untyped-def]
    async def step(_request: object):  # type: ignore[no-untyped-def]
        await release.wait()
        from openwork_core.models.adapters.scripted import scripted_events

        for event in scripted_events(ScriptedResponse(text="late")):
            yield event

    return step


async def test_beyond_the_limit_the_least_recently_used_idle_session_is_unloaded(
    store: PostgresStore, tmp_path: Path
) -> None:
    model = ScriptedModel([ScriptedResponse(text=f"answer {i}") for i in range(3)])
    async with runtime(
        store, tmp_path, model, load_limits=LoadLimits(max_loaded=2, eviction_grace_seconds=0)
    ) as rt:
        first, second, third = [await rt.new_session() for _ in range(3)]
        for sid in (first, second, third):
            await rt.run_turn(sid, f"hello {sid[-4:]}")
        sessions = rt.core.sessions
        assert set(sessions.held_leases()) == {second, third}, "the first one's lease given back"
        assert sessions.get(first) is None
        assert sessions.get(second) is not None and sessions.get(third) is not None


async def test_a_running_turn_a_pending_card_or_a_watcher_keeps_a_session_loaded(
    store: PostgresStore, tmp_path: Path
) -> None:
    release = asyncio.Event()
    model = ScriptedModel([_held(release), ScriptedResponse(text="b"), ScriptedResponse(text="c")])
    async with runtime(
        store, tmp_path, model, load_limits=LoadLimits(max_loaded=1, eviction_grace_seconds=0)
    ) as rt:
        busy = await rt.new_session()
        running = await rt.core.start_turn(
            busy, client_request_id="r1", inputs=[TextInput(text="work")]
        )
        await model.wait_for_requests(1, timeout=10)
        watched = await rt.new_session()
        await rt.run_turn(watched, "b")
        _, watching = await rt.core.subscribe(watched, None)
        sessions = rt.core.sessions
        far = time.monotonic() + 10_000
        assert await sessions.unload_idle(now=far) == []
        assert sessions.get(busy) is not None and sessions.get(watched) is not None
        watching.close()
        release.set()
        _, stream = await rt.core.subscribe(busy, None)
        try:
            async with asyncio.timeout(10):
                while (await rt.core.turn_view(busy, running.turn_id)).status is TurnStatus.RUNNING:
                    await stream.queue.get()
        finally:
            stream.close()
        assert sessions.get(watched) is None  # unwatched, it went when busy was loaded again
        assert await sessions.unload_idle(now=far) == [busy]
        assert sessions.held_leases() == {}


async def test_reading_a_session_never_loads_it_and_an_unloaded_one_comes_back_whole(
    store: PostgresStore, tmp_path: Path
) -> None:
    model = ScriptedModel([ScriptedResponse(text="first"), ScriptedResponse(text="second")])
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        await rt.run_turn(sid, "one")
        sessions = rt.core.sessions
        before = await rt.services[sid].chat.context_view()
        assert await sessions.unload_idle(now=time.monotonic() + 10_000) == [sid]
        await rt.core.get_session(sid)
        snapshot = await rt.core.snapshot(sid)
        page = await rt.core.list_messages(sid, after_sequence=0, limit=50)
        assert sessions.get(sid) is None
        assert snapshot.runtime.state == "idle"
        assert len(page.messages) == len(before.items)
        turn_id, _ = await rt.run_turn(sid, "two")
        after = await rt.services[sid].chat.context_view()
        assert [i.origin for i in after.items[: len(before.items)]] == [
            i.origin for i in before.items
        ]
        assert (await rt.core.turn_view(sid, turn_id)).final_text == "second"
