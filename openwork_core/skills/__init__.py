"""Skills: discovery and parsing of ``$HOME/.agents/skills/<name>/SKILL.md`` (skills.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openwork_core.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from openwork_core.skills.discovery import (
        MAX_SKILLS,
        SkillDiscovery,
        SkillError,
        SkillLoadError,
        SkillParseError,
        SkillSummary,
        SkillWarning,
        discover_skills,
        is_valid_skill_name,
        read_skill_body,
    )

_EXPORTS = {
    "MAX_SKILLS": "openwork_core.skills.discovery",
    "SkillDiscovery": "openwork_core.skills.discovery",
    "SkillError": "openwork_core.skills.discovery",
    "SkillLoadError": "openwork_core.skills.discovery",
    "SkillParseError": "openwork_core.skills.discovery",
    "SkillSummary": "openwork_core.skills.discovery",
    "SkillWarning": "openwork_core.skills.discovery",
    "discover_skills": "openwork_core.skills.discovery",
    "is_valid_skill_name": "openwork_core.skills.discovery",
    "read_skill_body": "openwork_core.skills.discovery",
}
"""Each public name's module: nothing is imported until a name is used."""

__all__ = [
    "MAX_SKILLS",
    "SkillDiscovery",
    "SkillError",
    "SkillLoadError",
    "SkillParseError",
    "SkillSummary",
    "SkillWarning",
    "discover_skills",
    "is_valid_skill_name",
    "read_skill_body",
]

if not TYPE_CHECKING:  # for mypy the names are the imports above: a misspelt one is an error
    __getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
