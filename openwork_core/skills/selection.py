"""Explicit skill selection before a turn is accepted (skills.md §4). Blocking: run it off the
event loop. Any failure creates no turn and writes nothing."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from openwork_chat_state.error_root import OpenWorkError
from openwork_core.context.item_limits import check_skill_body
from openwork_core.skills.discovery import SkillError, discover_skills, read_skill_body

SKILL_FILE_NAME = "SKILL.md"


class SkillSelectionError(OpenWorkError):
    code: ClassVar[str] = "skill_selection_error"
    http_status: ClassVar[int] = 422


class SkillNotFound(SkillSelectionError):
    """The selected skill is not one of the current enabled discoveries (skills.md §4 step 6)."""

    code = "skill_not_found"

    def __init__(self, name: str) -> None:
        super().__init__(f"Selected skill is unavailable: {name}")


@dataclass(frozen=True, slots=True)
class SelectedSkill:
    name: str
    path: str
    body: str


def skill_snapshot_text(skill: SelectedSkill) -> str:
    """The body snapshot message, written before the visible user message."""
    return f"<skill>\n<name>{skill.name}</name>\n<path>{skill.path}</path>\n{skill.body}\n</skill>"


def select_skills(
    root: Path | None, disabled: frozenset[str], requested: Sequence[tuple[str, str]]
) -> tuple[SelectedSkill, ...]:
    """Resolve ``(name, path)`` pairs in input order, deduplicated by canonical path.

    Raises SkillNotFound (unknown, disabled, not exactly ``<root>/<dir>/SKILL.md``, unreadable)
    or ``SkillTooLarge`` (body at 8 000 tokens or more)."""
    if not requested:
        return ()
    enabled = {
        (s.name, os.path.realpath(s.path))
        for s in discover_skills(root).skills
        if s.name not in disabled
    }
    canonical_root = os.path.realpath(root) if root is not None else None
    selected: list[SelectedSkill] = []
    seen: set[str] = set()
    for name, path in requested:
        canonical = os.path.realpath(path)
        if (
            canonical_root is None
            or Path(canonical).name != SKILL_FILE_NAME
            or os.path.dirname(os.path.dirname(canonical)) != canonical_root
            or (name, canonical) not in enabled
        ):
            raise SkillNotFound(name)
        if canonical in seen:
            continue
        seen.add(canonical)
        try:
            body = read_skill_body(canonical)
        except SkillError as exc:
            raise SkillNotFound(name) from exc
        skill = SelectedSkill(name, canonical, body)
        check_skill_body(name, skill_snapshot_text(skill))
        selected.append(skill)
    return tuple(selected)
