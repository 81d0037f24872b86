"""The live part of an SSE stream (daemon-api.md §4; issue 10 point 6): shutdown ends a stream
that waits for an update by cancelling that wait, a client that goes away cancels the stream, and
neither leaves a task behind; what was queued before shutdown is still sent (issue 25 point 5)."""

from __future__ import annotations

import asyncio
import json

import pytest

from openwork_core.daemon.sse import global_events, session_events
from openwork_core.ids import SessionId, TurnId
from openwork_core.session.outcome import Cancelled
from openwork_core.session.update_streams import GlobalUpdates, UpdateHub
from openwork_core.session.updates import (
    SessionUpdateEnvelope,
    StreamEndReason,
    TextDeltaUpdate,
    TurnFinished,
)


def _others() -> set[asyncio.Task[object]]:
    return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}


async def test_shutdown_ends_a_waiting_stream_and_leaves_no_task() -> None:
    hub = GlobalUpdates()
    shutdown = asyncio.Event()
    replay, subscription = hub.subscribe_after(None)
    before = _others()
    received: list[dict[str, str]] = []
    waiting = asyncio.Event()

    async def consume() -> None:
        stream = global_events(replay, subscription, shutdown)
        hub.publish(_envelope())
        async for event in stream:
            received.append(event)
            waiting.set()

    consumer = asyncio.get_running_loop().create_task(consume())
    async with asyncio.timeout(5):
        await waiting.wait()
        shutdown.set()
        await consumer  # returns normally: the stream ended, it was not cancelled from outside
    assert len(received) == 1
    assert _others() == before
    assert subscription not in hub._subscribers


async def test_a_client_that_goes_away_cancels_the_stream_and_its_watcher() -> None:
    hub = GlobalUpdates()
    shutdown = asyncio.Event()
    replay, subscription = hub.subscribe_after(None)
    before = _others()
    first = asyncio.Event()
    hub.publish(_envelope())

    async def consume() -> None:
        async for _ in global_events(replay, subscription, shutdown):
            first.set()  # after this the stream's next await is the queue wait

    consumer = asyncio.get_running_loop().create_task(consume())
    async with asyncio.timeout(5):
        await first.wait()
        consumer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await consumer
    assert _others() == before
    assert not shutdown.is_set()


async def test_a_stopped_sessions_last_updates_are_sent_after_shutdown_is_set() -> None:
    """The daemon stops its sessions, then sets shutdown: a stream that had not yet sent the
    stopped turn's ``turn_finished`` and the ``stream_ended`` after it sends both, in order, then
    ends (a client that saw the connection close first could not tell a stop from a cancel)."""
    hub = UpdateHub(SessionId("ses_1"), GlobalUpdates(), 0)
    shutdown = asyncio.Event()
    replay, subscription = hub.subscribe_after(None)
    hub.emit(TurnId("turn_1"), TurnFinished(outcome=Cancelled()))
    hub.end(StreamEndReason.UNLOADED)
    shutdown.set()
    async with asyncio.timeout(5):
        sent = [
            json.loads(event["data"])["update"]["type"]
            async for event in session_events(SessionId("ses_1"), replay, subscription, shutdown)
        ]
    assert sent == ["turn_finished", "stream_ended"]


def _envelope() -> SessionUpdateEnvelope:
    return SessionUpdateEnvelope(
        session_id=SessionId("ses_1"),
        turn_id=None,
        sequence=1,
        occurred_at_ms=0,
        update=TextDeltaUpdate(delta="a"),
    )
