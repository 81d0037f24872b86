"""Session sandbox modes and the sandbox availability verdict (permissions-sandbox.md §1, §2)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class SandboxMode(enum.StrEnum):
    """Wire and database spelling; the World State text spells ``accept-edits``."""

    AUTO = "auto"
    ACCEPT_EDITS = "accept_edits"

    @property
    def display(self) -> str:
        return "accept-edits" if self is SandboxMode.ACCEPT_EDITS else "auto"


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """The self-check verdict, cached for the process: available, or unavailable with a reason."""

    available: bool
    reason: str | None = None
