"""Skills: discovery and parsing of ``$HOME/.agents/skills/<name>/SKILL.md`` (skills.md)."""

from __future__ import annotations

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
