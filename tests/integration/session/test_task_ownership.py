"""Structured concurrency (DESIGN.md §4.6): every task the runtime starts has an owner that awaits
or cancels it. After a completed turn, a cancelled turn, a turn cut short by shutdown, and the
shutdown itself, no task of the runtime is left pending (session-runtime.md §2, §10)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.session.input import TextInput
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import TurnStatus
from tests.support.runtime import runtime


def _held(release: asyncio.Event):  # type: ignore[no-untyped-def]
    async def step(_request: object):  # type: ignore[no-untyped-def]
        await release.wait()
        yield  # pragma: no cover - the turn is cancelled first

    return step


async def _terminal(rt, sid: str, turn_id: str) -> TurnStatus:  # type: ignore[no-untyped-def]
    _, subscription = await rt.core.subscribe(sid, None)
    try:
        async with asyncio.timeout(20):
            while (view := await rt.core.turn_view(sid, turn_id)).status is TurnStatus.RUNNING:
                await subscription.queue.get()
            return view.status
    finally:
        subscription.close()


async def test_no_task_is_left_pending_after_a_turn_a_cancel_and_a_shutdown(
    store: PostgresStore, tmp_path: Path
) -> None:
    before = asyncio.all_tasks()
    never = asyncio.Event()
    model = ScriptedModel([ScriptedResponse(text="done"), _held(never), _held(never)])
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        await rt.run_turn(sid, "first")
        cancelled = await rt.core.start_turn(
            sid, client_request_id="second", inputs=[TextInput(text="second")]
        )
        await model.wait_for_requests(2, timeout=10)
        await rt.core.cancel_turn(sid, cancelled.turn_id)
        assert await _terminal(rt, sid, cancelled.turn_id) is TurnStatus.CANCELLED
        other = await rt.new_session()
        cut = await rt.core.start_turn(
            other, client_request_id="third", inputs=[TextInput(text="third")]
        )
        await model.wait_for_requests(3, timeout=10)
    # the runtime has shut down: the turn it cut short ended cancelled, nothing is left running
    assert (await store.get_turn(other, cut.turn_id)).status is TurnStatus.CANCELLED
    left = {t for t in asyncio.all_tasks() - before if t is not asyncio.current_task()}
    assert not [t for t in left if not t.done()], [t.get_name() for t in left]
