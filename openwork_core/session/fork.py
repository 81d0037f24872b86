"""Where a fork may cut a session's history (issue 26 point 2), pure: at a turn boundary — 0
(nothing) or the last message of a finished turn, with no running turn before it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openwork_core.ids import TurnId
from openwork_core.session.errors import InvalidForkPoint


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnSpan:
    """One turn of the source, in order: whether it ended and its last message's sequence."""

    turn_id: TurnId
    finished: bool
    last_sequence: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ForkCut:
    through_sequence: int
    turns: tuple[TurnId, ...]
    """The turns the fork copies, in order."""


def fork_cut(turns: Sequence[TurnSpan], after: int | None) -> ForkCut:
    """The cut through ``after`` (default: the end of the last finished turn); ``InvalidForkPoint``
    when ``after`` is not a turn boundary."""
    ends: list[tuple[int, int]] = []  # (sequence, turns copied)
    last = 0
    for index, turn in enumerate(turns):
        if not turn.finished:
            break
        if turn.last_sequence is not None:
            last = turn.last_sequence
        ends.append((last, index + 1))
    boundaries = {0: 0} | dict(ends)
    through = last if after is None else after
    if through not in boundaries:
        raise InvalidForkPoint(through, tuple(sorted(b for b in boundaries if b)))
    count = boundaries[through]
    return ForkCut(through_sequence=through, turns=tuple(t.turn_id for t in turns[:count]))
