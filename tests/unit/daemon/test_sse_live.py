"""The live part of an SSE stream (daemon-api.md §4; issue 10 point 6): shutdown ends a stream
that waits for an update by cancelling that wait, a client that goes away cancels the stream, and
neither leaves a task behind."""

from __future__ import annotations

import asyncio

import pytest

from openwork_core.daemon.sse import global_events
from openwork_core.ids import SessionId
from openwork_core.session.update_streams import GlobalUpdates
from openwork_core.session.updates import SessionUpdateEnvelope, TextDeltaUpdate


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


def _envelope() -> SessionUpdateEnvelope:
    return SessionUpdateEnvelope(
        session_id=SessionId("ses_1"),
        turn_id=None,
        sequence=1,
        occurred_at_ms=0,
        update=TextDeltaUpdate(delta="a"),
    )
