"""``skills/catalog``: the enabled skills' names, descriptions and paths (§3; skills.md §3).

The body is the English gloss of skills.md §3, one ``- {name}: {description} (file: {path})`` line
per enabled skill in discovery order. No enabled skill -> the section is absent, so a catalog that
was never there sends nothing and one that disappears sends the invalidation notice. Warnings (from
discovery and from the 8 000-character cap) go to the log only, never to the model.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import structlog

from openwork_core.context.world_state.errors import SkillCatalogTaskError
from openwork_core.skills.discovery import (
    SkillDiscovery,
    SkillSummary,
    SkillWarning,
    discover_skills,
)

log = structlog.get_logger(__name__)

SKILL_CATALOG_TAG = "<available_skills>"
SKILL_CATALOG_CLOSE_TAG = "</available_skills>"
SKILL_CATALOG_REPLACEMENT_NOTICE = "The skill catalog below replaces the previous one."
SKILL_CATALOG_INVALIDATION_NOTICE = "The previous skill catalog no longer applies."
SKILL_CATALOG_HEADER = (
    "A skill is an operating instruction stored in SKILL.md. "
    "Below are all skills available in this session."
)
SKILL_CATALOG_FOOTER: tuple[str, ...] = (
    "When a task matches a description, first `read` its whole path before acting; "
    "do not guess the body from the description.",
    "Relative paths inside SKILL.md resolve against its directory. If there is a scripts/ folder, "
    "run the existing scripts instead of rewriting equivalent code.",
    "Read a chosen instruction file completely; do not read unrelated references/.",
)
MAX_SKILL_CATALOG_CHARS = 8_000
REASON_CATALOG_OVER_BUDGET = (
    f"the skill catalog is over {MAX_SKILL_CATALOG_CHARS} characters; "
    "this skill's line was dropped from it"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillCatalog:
    """The rendered catalog (``None`` when no enabled skill is listed) and every warning."""

    body: str | None
    warnings: tuple[SkillWarning, ...] = ()


def catalog_line(skill: SkillSummary) -> str:
    return f"- {skill.name}: {skill.description} (file: {skill.path})"


def _assemble(lines: list[str]) -> str:
    return "\n".join(
        [
            SKILL_CATALOG_TAG,
            SKILL_CATALOG_HEADER,
            "",
            *lines,
            "",
            *SKILL_CATALOG_FOOTER,
            SKILL_CATALOG_CLOSE_TAG,
        ]
    )


def render_skill_catalog(discovery: SkillDiscovery, disabled: Iterable[str]) -> SkillCatalog:
    """The catalog of the enabled skills, at most 8 000 characters. Pure.

    Over the cap, whole skill lines are dropped from the end, one warning per dropped line.
    """
    disabled_names = frozenset(disabled)
    enabled = [s for s in discovery.skills if s.name not in disabled_names]
    lines = [catalog_line(s) for s in enabled]
    fixed = len(_assemble([]))
    total = fixed + sum(len(line) + 1 for line in lines)
    kept = len(lines)
    while kept and total > MAX_SKILL_CATALOG_CHARS:
        kept -= 1
        total -= len(lines[kept]) + 1
    dropped = tuple(
        SkillWarning(path=s.path, reason=REASON_CATALOG_OVER_BUDGET) for s in enabled[kept:]
    )
    body = _assemble(lines[:kept]) if kept else None
    return SkillCatalog(body=body, warnings=discovery.warnings + dropped)


# ---- loader (blocking file I/O; runs inside the capture's worker thread) ----


def load_skill_catalog(skill_root: Path | None, disabled: frozenset[str]) -> SkillCatalog:
    """Scan the skill root, render the catalog and log every warning (skills.md §2–§3).

    A bad skill or an unreadable root is a warning; any other failure while building the catalog
    is ``SkillCatalogTaskError``.
    """
    try:
        catalog = render_skill_catalog(discover_skills(skill_root), disabled)
    except Exception as exc:
        raise SkillCatalogTaskError(f"building the skill catalog failed: {exc!r}") from exc
    for warning in catalog.warnings:
        log.warning("skill_catalog.warning", path=warning.path, reason=warning.reason)
    return catalog
