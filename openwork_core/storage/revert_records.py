"""A revert's records (issue 26 point 3): what a revert plans to hide and undo, and the active
revert an unrevert puts back; domain values shared by the revert port (``session/revert.py``)
and its PostgreSQL implementation (``storage/postgres/reverts.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from openwork_core.ids import TurnId


@dataclass(frozen=True, slots=True, kw_only=True)
class RevertPlan:
    from_sequence: int
    through_sequence: int
    turn_ids: tuple[TurnId, ...]
    """The turns the revert hides, in order."""
    change_ids: tuple[str, ...]
    """Their file changes not undone yet, in creation order."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ActiveRevert:
    revert_id: str
    turn_ids: tuple[TurnId, ...]
    change_ids: tuple[str, ...]
