"""Skill enablement and the listing host calls (skills.md §6): the disabled set is loaded at
startup, written to the database first (under a lock) and changed in memory only on success."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from openwork_chat_state.error_root import InvalidRequest
from openwork_core.skills.discovery import SkillWarning, discover_skills, is_valid_skill_name
from openwork_core.storage.postgres.skills import SkillStatusStore


class InvalidSkillName(InvalidRequest, ValueError):
    """Not a valid skill directory name (422 ``invalid_request``, docs/daemon-additions.md)."""

    http_status = 422


@dataclass(frozen=True, slots=True, kw_only=True)
class ListedSkill:
    source: Literal["agents"]
    name: str
    description: str
    path: str
    disabled: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillListing:
    skills: tuple[ListedSkill, ...]
    warnings: tuple[SkillWarning, ...]


def skill_listing(root: Path | None, disabled: frozenset[str]) -> SkillListing:
    """Blocking: rediscover and mark the disabled ones (disabled skills are still listed)."""
    discovery = discover_skills(root)
    return SkillListing(
        skills=tuple(
            ListedSkill(
                source=s.source,
                name=s.name,
                description=s.description,
                path=s.path,
                disabled=s.name in disabled,
            )
            for s in discovery.skills
        ),
        warnings=discovery.warnings,
    )


class SkillEnablement:
    def __init__(self, store: SkillStatusStore, root: Path | None) -> None:
        self._store = store
        self._root = root
        self._disabled: frozenset[str] = frozenset()
        self._lock = asyncio.Lock()

    async def load(self) -> None:
        self._disabled = await self._store.disabled_names()

    @property
    def disabled(self) -> frozenset[str]:
        """The persisted set; each turn and each manual compaction snapshots it at start."""
        return self._disabled

    async def listing(self) -> SkillListing:
        return await asyncio.to_thread(skill_listing, self._root, self._disabled)

    async def set_disabled(self, name: str, disabled: bool) -> SkillListing:
        if not is_valid_skill_name(name):
            raise InvalidSkillName(f"not a valid skill name: {name!r}")
        async with self._lock:
            await self._store.set_disabled(name, disabled)
            self._disabled = self._disabled | {name} if disabled else self._disabled - {name}
        return await self.listing()
