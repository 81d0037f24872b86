"""Issue 25 point 2 (desktop-protocol.md §3–§4: `sequence` per session, strictly increasing; a
client ignores `sequence <= lastSequence`): sequences never go back for a session's lifetime, and
point 5: a stopped actor's streams get a final ``stream_ended``."""

from __future__ import annotations

from openwork_core.session.updates import (
    SEQUENCES_PER_LEASE,
    SUBSCRIBER_CAPACITY,
    DraftCleared,
    GlobalUpdates,
    StreamEnded,
    StreamEndReason,
    UpdateHub,
    broadcast_floor,
    sequence_floor,
)


def test_the_first_owner_numbers_from_one_and_each_later_lease_epoch_above_every_earlier_one() -> (
    None
):
    """desktop-protocol.md §3: starting at 1; issue 25 point 2: a restart or a takeover (a new
    lease epoch) never numbers below what an earlier owner handed out."""
    assert sequence_floor(1) == 0
    first = UpdateHub("s", last_sequence=sequence_floor(1))
    handed_out = [first.emit("t", DraftCleared()).sequence for _ in range(3)]
    assert handed_out == [1, 2, 3]
    for epoch in (2, 3, 10):
        later = UpdateHub("s", last_sequence=sequence_floor(epoch))
        assert later.emit("t", DraftCleared()).sequence > sequence_floor(epoch - 1) + (
            SEQUENCES_PER_LEASE - 1
        )


def test_a_cursor_from_an_earlier_owner_gets_resync_at_the_current_sequence() -> None:
    """desktop-protocol.md §4: a ``Last-Event-ID`` from before a restart is older than anything
    the new owner buffered: ``resync`` with the current sequence, and no old-numbered updates."""
    hub = UpdateHub("s", last_sequence=sequence_floor(2))
    hub.emit("t", DraftCleared())
    replay = hub.replay(42)  # a cursor the first owner handed out
    assert replay.resync is True
    assert replay.last_sequence == sequence_floor(2) + 1
    assert hub.replay(sequence_floor(2)).resync is False  # the stored snapshot's sequence


def test_the_broadcast_starts_above_the_clock_of_its_start_in_microseconds() -> None:
    """The global stream's ids start at the wall clock in microseconds: a later process's ids are
    above an earlier one's, which emitted fewer events than microseconds passed."""
    before = broadcast_floor()
    broadcast = GlobalUpdates()
    assert broadcast.last_sequence >= before
    assert GlobalUpdates().last_sequence >= broadcast.last_sequence


def test_a_stopped_actor_ends_every_subscription_with_stream_ended_even_one_that_fell_behind() -> (
    None
):
    """Issue 25 point 5: the last item of each subscription is ``stream_ended`` (its reason), also
    when the subscriber's queue was full; it is broadcast like any update."""
    broadcast = GlobalUpdates(last_sequence=0)
    hub = UpdateHub("s", broadcast)
    keeping_up, behind = hub.subscribe(), hub.subscribe()
    hub.emit("t", DraftCleared())
    keeping_up.queue.get_nowait()
    for _ in range(SUBSCRIBER_CAPACITY + 5):
        hub.emit("t", DraftCleared())
        keeping_up.queue.get_nowait()
    assert behind.lagged and behind.queue.full()
    last = hub.end(StreamEndReason.DELETED)
    assert last.update == StreamEnded(reason=StreamEndReason.DELETED)
    assert keeping_up.queue.get_nowait() is last
    drained = [behind.queue.get_nowait() for _ in range(behind.queue.qsize())]
    assert drained[-1] is last
    assert list(broadcast)[-1].envelope is last
