"""Pure rules of the desktop reads (issue 16): titles, previews, cursors, the global replay."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from openwork_core.desktop.cursor import (
    InvalidCursor,
    parse_session_cursor,
    parse_turn_cursor,
    session_cursor,
    turn_cursor,
)
from openwork_core.desktop.titles import derived_title, preview
from openwork_core.ids import SessionId
from openwork_core.session.update_streams import GlobalUpdates
from openwork_core.session.updates import DraftCleared, SessionUpdateEnvelope
from openwork_core.storage.desktop_records import SessionKey


def test_the_title_is_the_first_non_blank_line_folded_and_clipped_to_80_characters() -> None:
    assert derived_title("\n\n   Fix   the\tbuild  \nthen deploy") == "Fix the build"
    long = derived_title("y" * 200)
    assert long is not None and len(long) == 80 and long.endswith("…")
    assert derived_title("x" * 80) == "x" * 80
    assert derived_title("  \n\t") is None
    assert derived_title("\u200b\ufeff\n\u2060 Deploy\u200b it\u200b ") == "Deploy\u200b it"
    assert derived_title("\u200b \u200d\n\u00a0") is None  # zero-width and no-break: blank
    assert derived_title(None) is None


def test_a_preview_folds_whitespace_and_keeps_at_most_200_characters() -> None:
    text = preview("a\n\nb " + "c" * 500)
    assert text is not None and text.startswith("a b c") and len(text) == 200
    assert preview("   ") is None


def test_cursors_round_trip_and_anything_else_is_refused() -> None:
    key = SessionKey(created_at=datetime(2026, 1, 2, 3, 4, 5, 678, tzinfo=UTC), session_id="ses_x")
    assert parse_session_cursor(session_cursor(key)) == key
    assert parse_turn_cursor(turn_cursor(17)) == 17
    for bad in ("", "!!!", turn_cursor(3), session_cursor(key)[:-3]):
        with pytest.raises(InvalidCursor):
            parse_session_cursor(bad)
    for bad in ("e30", session_cursor(key)):  # {} and a session cursor
        with pytest.raises(InvalidCursor):
            parse_turn_cursor(bad)


def _envelope(session: str, sequence: int) -> SessionUpdateEnvelope:
    return SessionUpdateEnvelope(
        session_id=SessionId(session),
        turn_id=None,
        sequence=sequence,
        occurred_at_ms=0,
        update=DraftCleared(),
    )


def test_the_global_broadcast_numbers_events_and_replays_like_the_session_stream() -> None:
    """daemon-api.md §2 replay rules on ``GET /v1/events``: newer than the cursor; ``resync``
    when the cursor left the buffer or is ahead of this process."""
    hub = GlobalUpdates(ring_capacity=3, last_sequence=0)
    for n in range(1, 6):
        hub.publish(_envelope("a" if n % 2 else "b", n))
    replay = hub.replay(3)
    assert [e.sequence for e in replay.items] == [4, 5] and not replay.resync
    assert hub.replay(2).resync is False and [e.sequence for e in hub.replay(2).items] == [3, 4, 5]
    left = hub.replay(1)
    assert left.resync and [e.sequence for e in left.items] == [3, 4, 5]
    ahead = hub.replay(9)
    assert ahead.resync and ahead.items == () and ahead.last_sequence == 5
    assert hub.replay(5).items == () and not hub.replay(5).resync


def test_a_subscriber_gets_every_event_published_after_it_subscribed_in_order() -> None:
    hub = GlobalUpdates(last_sequence=0)
    hub.publish(_envelope("a", 1))
    replay, subscription = hub.subscribe_after(0)
    hub.publish(_envelope("b", 1))
    assert [e.sequence for e in replay.items] == [1]
    live = subscription.queue.get_nowait()
    assert live.sequence == 2 and live.envelope.session_id == "b"
    assert subscription.current_sequence == 2
    subscription.close()
    hub.publish(_envelope("a", 2))
    assert subscription.queue.empty()
