"""Shared traversal of grep and glob (tools.md §7 grep/glob).

Honours ``.gitignore`` files (from the workspace root down to each directory), skips hidden
files and directories, never follows symlinks, and checks cancel + the 30 s budget per file.
Blocking: run in a thread. Negation across different ``.gitignore`` files is not modelled.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from openwork_tools.gitignore import IgnoreRules, read_gitignore

SEARCH_TIMEOUT_S = 30.0
T = TypeVar("T")


class SearchStopped(Exception):
    """Raised inside the walk when the call is cancelled or the time budget ran out."""

    def __init__(self, cancelled: bool) -> None:
        super().__init__("cancelled" if cancelled else "timed out")
        self.cancelled = cancelled


@dataclass(frozen=True, slots=True)
class StopCheck:
    """Cancel flag (read from the worker thread) and a monotonic deadline."""

    cancelled: Callable[[], bool]
    deadline: float

    def __call__(self) -> None:
        if self.cancelled():
            raise SearchStopped(cancelled=True)
        if time.monotonic() >= self.deadline:
            raise SearchStopped(cancelled=False)


def make_stop(
    cancel_is_set: Callable[[], bool], call_remaining: float | None, timeout: float
) -> StopCheck:
    budget = timeout if call_remaining is None else min(timeout, call_remaining)
    return StopCheck(cancel_is_set, time.monotonic() + budget)


async def run_search(work: Callable[[StopCheck], T], stop: StopCheck) -> T:
    """Run the blocking search in a thread; if the awaiting task is cancelled, tell the thread
    to stop at its next check (threads cannot be interrupted) and re-raise."""
    abandoned = threading.Event()
    guarded = StopCheck(lambda: abandoned.is_set() or stop.cancelled(), stop.deadline)
    try:
        return await asyncio.to_thread(work, guarded)
    except asyncio.CancelledError:
        abandoned.set()
        raise


@dataclass(frozen=True, slots=True)
class _Ignore:
    base: Path
    spec: IgnoreRules

    def ignores(self, path: Path, is_dir: bool) -> bool:
        rel = path.relative_to(self.base).as_posix()
        return self.spec.match_file(rel + "/" if is_dir else rel)


def _load_ignore(directory: Path) -> _Ignore | None:
    lines = read_gitignore(directory / ".gitignore")
    return None if lines is None else _Ignore(directory, IgnoreRules.of_gitignore(lines))


def _ancestor_ignores(root: Path, workspace: Path) -> list[_Ignore]:
    if root != workspace and workspace not in root.parents:
        return []
    chain = [workspace, *reversed([p for p in root.parents if workspace in p.parents])]
    loaded = (_load_ignore(d) for d in chain if d != root)
    return [i for i in loaded if i is not None]


def walk_files(
    root: Path, workspace: Path, stop: StopCheck, skip_dirs: tuple[Path, ...] = ()
) -> Iterator[Path]:
    """Regular files under ``root`` (or ``root`` itself when it is a file), in sorted order.

    ``skip_dirs`` (the credential paths, files or directories) are never entered or listed,
    hidden or not.
    """
    if not root.is_dir():
        stop()
        yield root
        return
    ignores = _ancestor_ignores(root, workspace)
    yield from _walk(root, ignores, stop, frozenset(skip_dirs))


def _walk(
    directory: Path, ignores: list[_Ignore], stop: StopCheck, skip: frozenset[Path]
) -> Iterator[Path]:
    stop()
    own = _load_ignore(directory)
    chain = [*ignores, own] if own is not None else ignores
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.is_symlink():
            continue
        path = Path(entry.path)
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
            is_file = entry.is_file(follow_symlinks=False)
        except OSError:
            continue
        if path in skip or any(i.ignores(path, is_dir) for i in chain):
            continue
        if is_dir:
            yield from _walk(path, chain, stop, skip)
        elif is_file:
            stop()
            yield path
