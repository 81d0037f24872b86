"""The per-call sandbox policy stamped by Core (tools.md §5, permissions-sandbox.md §1, §4)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

from openwork_tools.modes import SandboxMode


class Access(enum.StrEnum):
    READ = "read"
    WRITE = "write"


class GrantScope(enum.StrEnum):
    EXACT = "exact"
    SUBTREE = "subtree"


class Actor(enum.StrEnum):
    """Who touches the path: an in-process file tool or a sandboxed process (bash)."""

    FILE_TOOL = "file_tool"
    PROCESS = "process"


@dataclass(frozen=True, slots=True)
class PathGrant:
    """One approved path for a single call; ``write`` implies read."""

    path: Path
    access: Access
    scope: GrantScope

    def covers(self, real: Path, access: Access) -> bool:
        if access is Access.WRITE and self.access is not Access.WRITE:
            return False
        if self.scope is GrantScope.EXACT:
            return real == self.path
        return real == self.path or self.path in real.parents


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """The session mode plus the paths approved for this call only (nothing is stored)."""

    mode: SandboxMode = SandboxMode.AUTO
    grants: tuple[PathGrant, ...] = ()

    def granted(self, real: Path, access: Access) -> bool:
        return any(g.covers(real, access) for g in self.grants)
