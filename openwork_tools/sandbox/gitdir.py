"""What of a workspace's git metadata runs later, and so is never writable (issue 22 point 3).

git reads commands to run from its configuration (``core.fsmonitor``, ``core.hooksPath``,
``diff.*.textconv``, filters, aliases…), from hooks, from ``info/attributes`` (which selects
filters), from the legacy ``remotes/`` and ``branches/`` files (URLs, hence transports), and finds
those files through ``commondir`` / ``gitdir`` pointers. Those entries are bound read-only in bash;
objects, refs, the index, ``HEAD``, ``logs/`` and the other state git writes while committing stay
writable, so ``git add``, ``commit`` and ``checkout`` still work in ``auto``. The file tools
refuse the whole ``.git`` (``paths.is_hard_protected``).

All functions here do blocking file I/O.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

GIT = ".git"
RUNS_LATER = (
    "config",
    "config.worktree",
    "hooks",
    "info",
    "remotes",
    "branches",
    "worktrees",
    "commondir",
    "gitdir",
)
"""The entries of a git directory bound read-only in bash."""
MAX_SUBMODULE_DEPTH = 4


def pointer_target(dot_git: Path) -> Path | None:
    """The directory a ``.git`` file names (``gitdir: <path>``, relative to the file), resolved."""
    try:
        with dot_git.open(encoding="utf-8", errors="replace") as fh:
            first = fh.readline(4096)
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    target = Path(first.removeprefix("gitdir:").strip())
    return Path(os.path.realpath(dot_git.parent / target))


def linked_git_dirs(workspace: Path) -> tuple[Path, ...]:
    """For a workspace whose ``.git`` is a file (a linked worktree, a submodule): the git
    directory it names and that directory's ``commondir`` (where config and hooks live)."""
    dot_git = workspace / GIT
    if not dot_git.is_file():
        return ()
    target = pointer_target(dot_git)
    if target is None:
        return ()
    found = [target]
    with contextlib.suppress(OSError):
        common = (target / "commondir").read_text(encoding="utf-8").strip()
        if common:
            found.append(Path(os.path.realpath(target / common)))
    return tuple(dict.fromkeys(found))


def _git_dirs_below(git_dir: Path, depth: int = 0) -> list[Path]:
    """``git_dir`` and the submodule git directories under its ``modules/`` (names may hold
    slashes: a directory with a ``HEAD`` is a git directory, others are walked into)."""
    found = [git_dir]
    if depth >= MAX_SUBMODULE_DEPTH:
        return found
    pending = [git_dir / "modules"]
    while pending:
        directory = pending.pop()
        try:
            entries = [e for e in os.scandir(directory) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            if (path / "HEAD").exists():
                found += _git_dirs_below(path, depth + 1)
            else:
                pending.append(path)
    return found


def read_only_git_entries(workspace: Path) -> list[Path]:
    """The existing paths bash must see read-only in a writable workspace: the ``RUNS_LATER``
    entries of ``<ws>/.git`` and of every submodule's git directory below it, or the ``.git``
    file itself when the workspace is a linked worktree or a submodule checkout."""
    dot_git = workspace / GIT
    if dot_git.is_symlink() or dot_git.is_file():
        return [dot_git]
    if not dot_git.is_dir():
        return []
    return [
        entry
        for git_dir in _git_dirs_below(dot_git)
        for entry in (git_dir / name for name in RUNS_LATER)
        if os.path.lexists(entry)
    ]
