"""A cgroup per bash command tree, when the daemon may make one (issue 22 point 5).

The limits of ``sandbox.limits`` are per process (memory) or per user namespace (processes, and
the kernel does not count processes for uid 0). When the daemon can create a child of its own
cgroup — root, or a delegated sub-tree — each command also gets ``pids.max`` (its process count,
root included) and a memory limit for the whole tree, and the cgroup's counters say for certain
which limit ended the command. cgroup v2 needs ``memory`` and ``pids`` enabled in the daemon's
``cgroup.subtree_control``; cgroup v1 needs the ``pids`` and ``memory`` hierarchies writable.
Without either the rlimits alone hold (``doctor`` and the banner say so).

The command enters its cgroup before it starts anything: a shell that waits on a pipe is
spawned, its pid is written to ``cgroup.procs``, and only then is it let go to ``exec`` bwrap.

All functions here do blocking file I/O; async callers run them with ``asyncio.to_thread``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from openwork_tools.policy import SandboxSettings
from openwork_tools.sandbox.limits import LimitHit

CGROUP_ROOT = Path("/sys/fs/cgroup")
CHILD_PREFIX = "openwork-bash-"
REMOVE_WAIT_S = 5.0
"""How long ``remove`` waits for the kernel to finish tearing the killed tree down."""


@dataclass(frozen=True, slots=True)
class CgroupParents:
    """Where this process may create command cgroups: one directory (v2) or one per
    controller (v1)."""

    version: int
    pids: Path
    memory: Path


def _own_cgroups(text: str) -> dict[str, str]:
    """``/proc/self/cgroup`` as controller -> path (``""`` is the v2 line)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        _, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        for controller in controllers.split(",") if controllers else [""]:
            found[controller] = path
    return found


def parents_from(own: dict[str, str], root: Path) -> CgroupParents | None:
    """The usable parents for a process in ``own`` cgroups under the mount ``root``, or None."""
    unified = own.get("")
    if unified is not None and (root / "cgroup.controllers").exists():
        parent = root / unified.lstrip("/")
        try:
            enabled = (parent / "cgroup.subtree_control").read_text().split()
        except OSError:
            return None
        if {"memory", "pids"} <= set(enabled) and os.access(parent, os.W_OK):
            return CgroupParents(2, parent, parent)
        return None
    if "pids" in own and "memory" in own:
        pids = root / "pids" / own["pids"].lstrip("/")
        memory = root / "memory" / own["memory"].lstrip("/")
        if all(os.access(p, os.W_OK) for p in (pids, memory)):
            return CgroupParents(1, pids, memory)
    return None


@functools.cache
def find_parents() -> CgroupParents | None:
    """This process's command-cgroup parents, looked up once."""
    try:
        own = _own_cgroups(Path("/proc/self/cgroup").read_text())
    except OSError:
        return None
    return parents_from(own, CGROUP_ROOT)


def _counter(path: Path, key: str) -> int:
    """The value of ``key`` in a flat-keyed cgroup file (``memory.events``, ``pids.events``)."""
    with contextlib.suppress(OSError, ValueError):
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    return 0


class CommandCgroup:
    """The cgroup(s) of one command tree: made with its limits, entered, read, removed."""

    def __init__(self, parents: CgroupParents, name: str, settings: SandboxSettings) -> None:
        self.version = parents.version
        self.pids = parents.pids / name
        self.memory = parents.memory / name
        self._settings = settings

    @property
    def dirs(self) -> tuple[Path, ...]:
        return tuple(dict.fromkeys((self.pids, self.memory)))

    @classmethod
    def create(cls, name: str, settings: SandboxSettings) -> CommandCgroup | None:
        """A fresh cgroup with the limits written, or None when this daemon cannot make one."""
        parents = find_parents()
        if parents is None:
            return None
        group = cls(parents, CHILD_PREFIX + name, settings)
        try:
            for directory in group.dirs:
                directory.mkdir()
            group._write_limits()
        except OSError:
            group.remove()
            return None
        return group

    def _write_limits(self) -> None:
        memory = str(self._settings.memory_mb * 1024 * 1024)
        (self.pids / "pids.max").write_text(str(self._settings.max_processes))
        if self.version == 2:
            (self.memory / "memory.max").write_text(memory)
            with contextlib.suppress(FileNotFoundError):
                (self.memory / "memory.swap.max").write_text("0")
            return
        (self.memory / "memory.limit_in_bytes").write_text(memory)
        with contextlib.suppress(FileNotFoundError):  # only with swap accounting
            (self.memory / "memory.memsw.limit_in_bytes").write_text(memory)

    def enter(self, pid: int) -> None:
        for directory in self.dirs:
            (directory / "cgroup.procs").write_text(str(pid))

    def hits(self) -> frozenset[LimitHit]:
        """The limits the kernel enforced on this tree."""
        found = set()
        if _counter(self.pids / "pids.events", "max") > 0:
            found.add(LimitHit.PROCESSES)
        events = "memory.events" if self.version == 2 else "memory.oom_control"
        if _counter(self.memory / events, "oom_kill") > 0:
            found.add(LimitHit.MEMORY)
        return frozenset(found)

    def _kill_members(self) -> bool:
        """SIGKILL whatever is left; True when nothing is."""
        alive = False
        for directory in self.dirs:
            try:
                members = (directory / "cgroup.procs").read_text().split()
            except OSError:
                continue
            for pid in members:
                alive = True
                with contextlib.suppress(OSError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
        return not alive

    def remove(self) -> bool:
        """Kill what is left in the tree and remove its directories; False when the kernel kept
        one busy for ``REMOVE_WAIT_S`` (it is then left behind, holding no live process)."""
        deadline = time.monotonic() + REMOVE_WAIT_S
        while True:
            self._kill_members()
            for directory in self.dirs:
                with contextlib.suppress(OSError):
                    directory.rmdir()
            if not any(d.exists() for d in self.dirs):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)  # the killed processes are still exiting: the kernel's pace
