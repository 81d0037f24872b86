"""The numbered streams of session updates (session-runtime.md §7; issue 25 points 2 and 5): one
session's (``UpdateHub``) and every session's (``GlobalUpdates``), each a sequence counter, a ring
buffer for replay and bounded subscribers; a subscriber that falls behind gets ``resync``.

Sequences never go back for a session's lifetime: an actor numbers its updates from
``sequence_floor`` of its lease epoch, above every earlier owner's (a restart, a takeover by
another daemon, an unload and reload); when the actor stops, its streams get ``stream_ended`` and
end. The broadcast numbers from ``broadcast_floor``."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeAlias, TypeVar

from openwork_core.ids import SessionId, TurnId
from openwork_core.session.updates import (
    GlobalEvent,
    SessionUpdate,
    SessionUpdateEnvelope,
    StreamEnded,
    StreamEndReason,
)

RING_CAPACITY = 512
SUBSCRIBER_CAPACITY = 512
GLOBAL_CAPACITY = 4096
GLOBAL_RING_CAPACITY = 2048
SEQUENCES_PER_LEASE = 1_000_000_000
"""The sequences one lease epoch may number (an actor emitting a thousand updates a second for
eleven days); the ``(epoch - 1)``-th block of them is that epoch's."""


def sequence_floor(lease_epoch: int) -> int:
    """The sequence an actor holding the session's lease with ``lease_epoch`` starts after: the
    first owner (epoch 1) numbers from 1 as the protocol says; each later owner's block is above
    every earlier one's, so a client's ``Last-Event-ID`` from before a restart or a takeover is
    older than everything it will be sent next."""
    return max(0, lease_epoch - 1) * SEQUENCES_PER_LEASE


def broadcast_floor() -> int:
    """Where this process's ``GET /v1/events`` ids start: the wall clock in microseconds, so a
    restarted daemon's ids are above the previous process's (which emitted fewer than one event
    per microsecond of its life) unless the clock was set back past the previous start."""
    return time.time_ns() // 1000


T = TypeVar("T", SessionUpdateEnvelope, GlobalEvent)


class UpdateSubscription(Generic[T]):
    """A bounded queue of envelopes; a subscriber that falls behind is told to resync."""

    def __init__(
        self,
        capacity: int,
        on_close: Callable[[UpdateSubscription[T]], None],
        sequence: Callable[[], int],
    ) -> None:
        self._on_close: Callable[[UpdateSubscription[T]], None] = on_close
        self._sequence = sequence
        self.queue: asyncio.Queue[T] = asyncio.Queue(capacity)
        self.lagged = False

    def offer(self, item: T) -> None:
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:
            self.lagged = True

    def finish(self, last: T) -> None:
        """The stream's last item, queued even for a subscriber that fell behind: its oldest
        queued item makes room (it is told to resync first)."""
        if self.queue.full():
            self.queue.get_nowait()
            self.lagged = True
        self.queue.put_nowait(last)

    @property
    def current_sequence(self) -> int:
        """The latest sequence of the session, or of the Core-wide broadcast."""
        return self._sequence()

    def close(self) -> None:
        self._on_close(self)


Subscription: TypeAlias = UpdateSubscription[SessionUpdateEnvelope]
GlobalSubscription: TypeAlias = UpdateSubscription[GlobalEvent]


@dataclass(frozen=True, slots=True)
class Replay(Generic[T]):
    items: tuple[T, ...]
    resync: bool
    last_sequence: int
    """The sequence when the replay was read (what a ``resync`` event carries)."""


SessionReplay: TypeAlias = Replay[SessionUpdateEnvelope]
GlobalReplay: TypeAlias = Replay[GlobalEvent]


class NumberedStream(Generic[T]):
    """A sequence counter, a ring buffer of the latest items and the subscribers: one session's
    updates (``UpdateHub``) or every session's (``GlobalUpdates``)."""

    def __init__(self, ring_capacity: int, subscriber_capacity: int, last_sequence: int) -> None:
        self._ring: deque[T] = deque(maxlen=ring_capacity)
        self._subscribers: set[UpdateSubscription[T]] = set()
        self._subscriber_capacity = subscriber_capacity
        self.last_sequence = last_sequence

    def _publish(self, item: T) -> None:
        self._ring.append(item)
        for subscriber in tuple(self._subscribers):
            subscriber.offer(item)

    def subscribe(self) -> UpdateSubscription[T]:
        subscription: UpdateSubscription[T] = UpdateSubscription(
            self._subscriber_capacity, self.unsubscribe, lambda: self.last_sequence
        )
        self._subscribers.add(subscription)
        return subscription

    def unsubscribe(self, subscription: UpdateSubscription[T]) -> None:
        self._subscribers.discard(subscription)

    def subscribe_after(
        self, after_sequence: int | None
    ) -> tuple[Replay[T], UpdateSubscription[T]]:
        """Subscribe, then read the replay, with no await between: nothing falls in between."""
        subscription = self.subscribe()
        if after_sequence is None:
            return Replay((), False, self.last_sequence), subscription
        return self.replay(after_sequence), subscription

    def replay(self, after_sequence: int) -> Replay[T]:
        """Buffered items newer than ``after_sequence``; ``resync`` when some are missing (the
        cursor left the buffer — a cursor from before a restart always has — or is ahead of
        this stream's sequence)."""
        if after_sequence > self.last_sequence:
            return Replay((), True, self.last_sequence)
        oldest = self._ring[0].sequence if self._ring else self.last_sequence + 1
        newer = tuple(e for e in self._ring if e.sequence > after_sequence)
        return Replay(newer, after_sequence < oldest - 1, self.last_sequence)

    @property
    def subscriber_count(self) -> int:
        """Clients watching now (a watched session is not idle)."""
        return len(self._subscribers)

    def __iter__(self) -> Iterator[T]:
        return iter(self._ring)


class GlobalUpdates(NumberedStream[GlobalEvent]):
    """The Core-wide broadcast of every session's updates: its own sequence (from
    ``broadcast_floor``) and a ring buffer of the latest 2 048 events, so ``GET /v1/events``
    replays after ``Last-Event-ID`` like the per-session stream."""

    def __init__(
        self, ring_capacity: int = GLOBAL_RING_CAPACITY, last_sequence: int | None = None
    ) -> None:
        first = broadcast_floor() if last_sequence is None else last_sequence
        super().__init__(ring_capacity, GLOBAL_CAPACITY, first)

    def publish(self, envelope: SessionUpdateEnvelope) -> None:
        self.last_sequence += 1
        self._publish(GlobalEvent(sequence=self.last_sequence, envelope=envelope))


class UpdateHub(NumberedStream[SessionUpdateEnvelope]):
    """One session's sequence counter (from ``sequence_floor`` of the actor's lease epoch),
    ring buffer and subscribers."""

    def __init__(
        self,
        session_id: SessionId,
        global_updates: GlobalUpdates | None = None,
        last_sequence: int = 0,
    ) -> None:
        super().__init__(RING_CAPACITY, SUBSCRIBER_CAPACITY, last_sequence)
        self.session_id = session_id
        self._global = global_updates

    def emit(self, turn_id: TurnId | None, update: SessionUpdate) -> SessionUpdateEnvelope:
        envelope = self._next(turn_id, update)
        self._publish(envelope)
        if self._global is not None:
            self._global.publish(envelope)
        return envelope

    def end(self, reason: StreamEndReason) -> SessionUpdateEnvelope:
        """The actor stops: ``stream_ended`` is emitted (and broadcast), queued as the last item
        of every subscription even one that fell behind; each stream ends after it."""
        envelope = self._next(None, StreamEnded(reason=reason))
        self._ring.append(envelope)
        for subscriber in tuple(self._subscribers):
            subscriber.finish(envelope)
        if self._global is not None:
            self._global.publish(envelope)
        return envelope

    def _next(self, turn_id: TurnId | None, update: SessionUpdate) -> SessionUpdateEnvelope:
        self.last_sequence += 1
        return SessionUpdateEnvelope(
            session_id=self.session_id,
            turn_id=turn_id,
            sequence=self.last_sequence,
            occurred_at_ms=int(time.time() * 1000),
            update=update,
        )
