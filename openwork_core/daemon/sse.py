"""Server-Sent Events for session updates (daemon-api.md §2, §4): replay from the ring buffer
after ``Last-Event-ID`` / ``after_sequence``, then live; ``resync`` first when updates were lost.

Every event has ``id:``; a ``resync`` carries the current sequence, so a client that reconnects
with it is sent only newer events. A session's stream ends after its ``stream_ended`` update (the
actor stopped: the session was deleted or unloaded)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TypeVar

from openwork_core.ids import SessionId
from openwork_core.session.update_streams import (
    GlobalReplay,
    GlobalSubscription,
    SessionReplay,
    Subscription,
    UpdateSubscription,
)
from openwork_core.session.updates import (
    BroadcastResync,
    GlobalEvent,
    Resync,
    SessionUpdateEnvelope,
    StreamEnded,
)
from openwork_core.session.wire import wire_json
from openwork_tools.faults import faultpoint

T = TypeVar("T", SessionUpdateEnvelope, GlobalEvent)


def _event(envelope: SessionUpdateEnvelope) -> dict[str, str]:
    return {"id": str(envelope.sequence), "data": wire_json(envelope).decode()}


def _resync(session_id: SessionId, sequence: int) -> dict[str, str]:
    envelope = SessionUpdateEnvelope(
        session_id=session_id,
        turn_id=None,
        sequence=sequence,
        occurred_at_ms=0,
        update=Resync(),
    )
    return {"event": "resync", "id": str(sequence), "data": wire_json(envelope).decode()}


async def session_events(
    session_id: SessionId,
    replay: SessionReplay,
    subscription: Subscription,
    shutdown: asyncio.Event,
) -> AsyncIterator[dict[str, str]]:
    """Replay, then live. Subscribed before the replay was read, so nothing falls in between;
    live envelopes already replayed, or folded into the snapshot a ``resync`` sends the client to,
    are skipped, so nothing comes twice; ``stream_ended`` is always sent, and ends the stream."""
    try:
        last = 0
        if replay.resync:
            last = replay.last_sequence
            yield _resync(session_id, last)
        else:
            for envelope in replay.items:
                last = envelope.sequence
                yield _event(envelope)
        async for live in _live(subscription, shutdown):
            if live is None:
                last = subscription.current_sequence
                yield _resync(session_id, last)
                continue
            ended = isinstance(live.update, StreamEnded)
            if live.sequence > last or ended:
                last = max(last, live.sequence)
                yield _event(live)
                faultpoint("sse_attached")  # a client is attached and has just been sent an event
            if ended:
                return
    finally:
        subscription.close()


def _global_event(event: GlobalEvent) -> dict[str, str]:
    return {"id": str(event.sequence), "data": wire_json(event.envelope).decode()}


def _global_resync(sequence: int) -> dict[str, str]:
    data = wire_json(BroadcastResync(sequence=sequence)).decode()
    return {"event": "resync", "id": str(sequence), "data": data}


async def global_events(
    replay: GlobalReplay, subscription: GlobalSubscription, shutdown: asyncio.Event
) -> AsyncIterator[dict[str, str]]:
    """Like ``session_events``: ``id:`` is the broadcast's own sequence; replay after
    ``Last-Event-ID`` from its ring buffer, ``resync`` first when some were lost, then live."""
    try:
        last = 0
        if replay.resync:
            last = replay.last_sequence
            yield _global_resync(last)
        else:
            for event in replay.items:
                last = event.sequence
                yield _global_event(event)
        async for live in _live(subscription, shutdown):
            if live is None:
                last = subscription.current_sequence
                yield _global_resync(last)
                continue
            if live.sequence <= last:
                continue
            last = live.sequence
            yield _global_event(live)
    finally:
        subscription.close()


async def _live(
    subscription: UpdateSubscription[T], shutdown: asyncio.Event
) -> AsyncIterator[T | None]:
    """Envelopes as they come; None when the subscriber fell behind and lost some. Once
    shutdown is set, what is already queued is still sent, then the stream ends: the daemon stops
    the sessions before it sets shutdown, so a session's stream sends its stopped turn's
    ``turn_finished`` and its ``stream_ended`` before its connection closes (issue 25 point 5).

    Structured: the stream's own task waits on the queue; shutdown cancels that task (one
    watcher task, owned here, cancelled and awaited however the stream ends), so no race between
    two futures and nothing left pending per disconnected client."""
    stream = asyncio.current_task()
    assert stream is not None
    waiting = stopping = False

    async def watch() -> None:
        nonlocal stopping
        await shutdown.wait()
        if waiting:  # only the queue wait is cancelled, never the consumer between envelopes
            stopping = True
            stream.cancel()

    watcher = asyncio.get_running_loop().create_task(watch())
    try:
        while not shutdown.is_set():
            if subscription.lagged:
                subscription.lagged = False
                yield None
                if shutdown.is_set():
                    break
            waiting = True
            try:
                envelope = await subscription.queue.get()
            except asyncio.CancelledError:
                if stopping and stream.uncancel() == 0:
                    break  # our own cancel: shutdown began; any other cancel propagates
                raise
            finally:
                waiting = False
            yield envelope
        while not subscription.queue.empty():  # queued before shutdown: sent, never dropped
            yield subscription.queue.get_nowait()
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
