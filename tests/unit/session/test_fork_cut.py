"""Where a fork may cut a session's history (issue 26 point 2): at a turn boundary only."""

from __future__ import annotations

import pytest

from openwork_core.ids import TurnId
from openwork_core.session.errors import InvalidForkPoint
from openwork_core.session.fork import TurnSpan, fork_cut

SPANS = (
    TurnSpan(turn_id=TurnId("t1"), finished=True, last_sequence=4),
    TurnSpan(turn_id=TurnId("t2"), finished=True, last_sequence=9),
    TurnSpan(turn_id=TurnId("t3"), finished=False, last_sequence=12),
)


def test_a_fork_cuts_at_the_end_of_a_finished_turn_or_at_nothing() -> None:
    """Issue 26 point 2: 0 copies nothing, a finished turn's last message copies through it."""
    assert fork_cut(SPANS, 0).turns == ()
    assert fork_cut(SPANS, 4).turns == (TurnId("t1"),)
    assert fork_cut(SPANS, 9).turns == (TurnId("t1"), TurnId("t2"))


def test_without_a_point_the_fork_copies_through_the_last_finished_turn() -> None:
    """Issue 26 point 2: the default is the end of the last finished turn (not the running one)."""
    cut = fork_cut(SPANS, None)
    assert (cut.through_sequence, cut.turns) == (9, (TurnId("t1"), TurnId("t2")))


@pytest.mark.parametrize("after", [3, 5, 12, 13])
def test_a_cut_inside_a_turn_in_the_running_one_or_beyond_is_refused(after: int) -> None:
    """Issue 26 point 2: 400 ``invalid_fork_point`` naming the valid ends."""
    with pytest.raises(InvalidForkPoint, match="0 or one of: 4, 9"):
        fork_cut(SPANS, after)
