"""Server-Sent Events for session updates (daemon-api.md §2, §4): replay from the ring buffer
after ``Last-Event-ID`` / ``after_sequence``, then live; ``resync`` first when updates were lost."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from openwork_core.ids import SessionId
from openwork_core.session.updates import (
    Replay,
    Resync,
    SessionUpdateEnvelope,
    Subscription,
)
from openwork_core.session.wire import wire_json
from openwork_tools.faults import faultpoint


def _event(envelope: SessionUpdateEnvelope) -> dict[str, str]:
    return {"id": str(envelope.sequence), "data": wire_json(envelope).decode()}


def _resync(session_id: SessionId, last_sequence: int) -> dict[str, str]:
    envelope = SessionUpdateEnvelope(
        session_id=session_id,
        turn_id=None,
        sequence=last_sequence,
        occurred_at_ms=0,
        update=Resync(),
    )
    return {"event": "resync", "data": wire_json(envelope).decode()}


async def session_events(
    session_id: SessionId,
    replay: Replay,
    subscription: Subscription,
    shutdown: asyncio.Event,
) -> AsyncIterator[dict[str, str]]:
    """Replay, then live. Subscribed before the replay was read, so nothing falls in between;
    live envelopes already replayed are skipped, so nothing comes twice."""
    try:
        last = 0
        if replay.resync:
            yield _resync(session_id, replay.last_sequence)
        for envelope in replay.envelopes:
            last = envelope.sequence
            yield _event(envelope)
        async for live in _live(subscription, shutdown):
            if live is None:
                yield _resync(session_id, subscription.current_sequence)
                continue
            if live.sequence <= last:
                continue
            last = live.sequence
            yield _event(live)
            faultpoint("sse_attached")  # a client is attached and has just been sent an event
    finally:
        subscription.close()


async def global_events(
    subscription: Subscription, shutdown: asyncio.Event
) -> AsyncIterator[dict[str, str]]:
    try:
        async for envelope in _live(subscription, shutdown):
            if envelope is None:
                yield {"event": "resync", "data": "{}"}
                continue
            yield {"data": wire_json(envelope).decode()}
    finally:
        subscription.close()


async def _live(
    subscription: Subscription, shutdown: asyncio.Event
) -> AsyncIterator[SessionUpdateEnvelope | None]:
    """Envelopes as they come; None when the subscriber fell behind and lost some.

    The pending ``queue.get()`` is cancelled however the stream ends (client gone, shutdown), so
    no task is left behind per disconnected client."""
    stop = asyncio.ensure_future(shutdown.wait())
    get: asyncio.Future[SessionUpdateEnvelope] | None = None
    try:
        while not shutdown.is_set():
            if subscription.lagged:
                subscription.lagged = False
                yield None
            get = asyncio.ensure_future(subscription.queue.get())
            done, _ = await asyncio.wait({get, stop}, return_when=asyncio.FIRST_COMPLETED)
            if get not in done:
                return
            envelope = get.result()
            get = None
            yield envelope
    finally:
        stop.cancel()
        if get is not None:
            get.cancel()
