"""World State sampling errors (context-window.md §3): each fails the Turn with its code."""

from __future__ import annotations

from typing import ClassVar


class WorldStateError(Exception):
    """Sampling failed; the Turn fails with ``code`` and the model is not called."""

    code: ClassVar[str] = "world_state_error"


class UserProjectContextError(WorldStateError):
    """The working directory cannot be listed, or the project context is over 16 384 characters."""

    code = "user_project_context_error"


class ProjectInstructionError(WorldStateError):
    """``AGENTS.md`` is a symlink, not a regular file, over 64 KiB, or not UTF-8."""

    code = "project_instruction_error"


class SkillCatalogTaskError(WorldStateError):
    """Building the skill catalog failed unexpectedly (a bad skill is only a logged warning)."""

    code = "skill_catalog_task_error"
