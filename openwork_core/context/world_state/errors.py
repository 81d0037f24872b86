"""World State sampling errors (context-window.md §3): each fails the Turn with its code.

The class carries the Turn's failure code itself (``code`` is a ``FailureCode``), so the runner
never maps a string to a code."""

from __future__ import annotations

from typing import ClassVar

from openwork_chat_state.error_root import OpenWorkError
from openwork_core.failure_codes import FailureCode


class WorldStateError(OpenWorkError):
    """Sampling failed; the Turn fails with ``code`` and the model is not called."""

    code: ClassVar[FailureCode]


class UserProjectContextError(WorldStateError):
    """The working directory cannot be listed, or the project context is over 16 384 characters."""

    code = FailureCode.USER_PROJECT_CONTEXT_ERROR


class ProjectInstructionError(WorldStateError):
    """``AGENTS.md`` is a symlink, not a regular file, over 64 KiB, or not UTF-8."""

    code = FailureCode.PROJECT_INSTRUCTION_ERROR


class SkillCatalogTaskError(WorldStateError):
    """Building the skill catalog failed unexpectedly (a bad skill is only a logged warning)."""

    code = FailureCode.SKILL_CATALOG_TASK_ERROR
