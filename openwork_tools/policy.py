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
    """The session mode plus what was approved for this call only (nothing is stored): paths,
    and the network for bash (issue 22: off unless the user grants it)."""

    mode: SandboxMode = SandboxMode.AUTO
    grants: tuple[PathGrant, ...] = ()
    network: bool = False

    def granted(self, real: Path, access: Access) -> bool:
        return any(g.covers(real, access) for g in self.grants)


NETWORK_GRANT_LINE = (
    "bash has no network (loopback only); a command that needs it sets "
    "sandboxPermissions.network to true, and the user is asked."
)
"""The one fixed line that tells the model how the network is granted: the description of the
``network`` escalation field and the network line of ``<sandbox_policy>`` (docs/tool-surface.md).
"""
NETWORK_ON_LINE = "bash shares the host's network."
"""The network line of ``<sandbox_policy>`` when ``OPENWORK_SANDBOX_NETWORK=on``."""


class NetworkSetting(enum.StrEnum):
    """``OPENWORK_SANDBOX_NETWORK``: ``off`` (bash has loopback only unless a call's card grants
    the network) or ``on`` (every bash call shares the host's network)."""

    OFF = "off"
    ON = "on"


DEFAULT_MEMORY_MB = 4096
DEFAULT_MAX_PROCESSES = 512
DEFAULT_MAX_FILE_MB = 4096


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """The daemon's sandbox settings, the same for every session (config.py's
    ``OPENWORK_SANDBOX_*``): the network default and the bounds of one command tree."""

    network: NetworkSetting = NetworkSetting.OFF
    memory_mb: int = DEFAULT_MEMORY_MB
    max_processes: int = DEFAULT_MAX_PROCESSES
    max_file_mb: int = DEFAULT_MAX_FILE_MB

    @property
    def network_on(self) -> bool:
        return self.network is NetworkSetting.ON
