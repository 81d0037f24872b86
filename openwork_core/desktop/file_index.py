"""The list of a workspace's files for the desktop's file search (issue 26 §5): a loader (I/O).

Built by one walk of the workspace, then kept: each later use stats every directory it knew (and
its ``.gitignore``) and lists again only those whose modification time moved, so a query on a
20 000-file tree pays a few thousand ``stat`` calls instead of a walk. A directory whose
``.gitignore`` rules changed is listed again with everything under it. A directory modified in
the last ``RACY_NS`` is listed again at every use (as git treats "racy" index entries): a change
made in the same clock tick as the last listing would not have moved its time.

What is listed: regular files under the root, as ``/``-separated paths relative to it, in sorted
order. Never followed: symlinks (a link can point outside the workspace). Never entered: ``.git``
and the ``skip`` directories (the daemon's home, the credential directories). Hidden files are
listed (``.github/workflows/ci.yml`` is something a user mentions); ``.gitignore`` files are
honoured from the root down, each relative to its own directory, as ``git`` reads them. At most
``max_files`` paths are kept (``truncated`` says so). Blocking: call it off the event loop.
"""

from __future__ import annotations

import enum
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from openwork_tools.gitignore import IgnoreRules, read_gitignore

DEFAULT_MAX_FILES = 200_000
RACY_NS = 2_000_000_000
"""Timestamps this close to now may hide a change made in the same tick (coarse clocks, FAT)."""
NEVER_ENTERED = frozenset({".git"})


@dataclass(frozen=True, slots=True)
class _Ignore:
    prefix: str
    """The directory of the ``.gitignore``, relative to the root, with a trailing ``/`` (or "")."""
    spec: IgnoreRules

    def ignores(self, rel: str, is_dir: bool) -> bool:
        inner = rel[len(self.prefix) :]
        return self.spec.match_file(inner + "/" if is_dir else inner)


@dataclass(slots=True)
class _Directory:
    mtime_ns: int
    ignore_mtime_ns: int | None
    ignore: _Ignore | None
    ignore_lines: tuple[str, ...] | None
    racy: bool
    """Modified so recently that a change in the same clock tick would not move its time (git's
    "racy" entries): listed again at every use until it is older than ``RACY_NS``."""
    files: list[str]
    subdirs: list[str]


@dataclass(slots=True)
class WorkspaceFileIndex:
    root: Path
    skip: frozenset[Path] = frozenset()
    max_files: int = DEFAULT_MAX_FILES
    _dirs: dict[str, _Directory] = field(default_factory=dict)
    _paths: tuple[str, ...] = ()
    _changed: bool = True

    @property
    def truncated(self) -> bool:
        return len(self._paths) >= self.max_files

    def paths(self) -> tuple[str, ...]:
        """Every listed file, brought up to date with the tree first; the same tuple as last
        time when nothing changed."""
        seen: set[str] = set()
        self._visit("", (), forced=False, seen=seen)
        for gone in self._dirs.keys() - seen:
            del self._dirs[gone]
            self._changed = True
        if self._changed:
            self._paths = self._flatten()
            self._changed = False
        return self._paths

    def _flatten(self) -> tuple[str, ...]:
        paths: list[str] = []
        for directory in self._dirs.values():
            paths.extend(directory.files)
        paths.sort()
        return tuple(paths[: self.max_files])

    def _visit(self, rel: str, chain: tuple[_Ignore, ...], *, forced: bool, seen: set[str]) -> None:
        absolute = f"{self.root}/{rel}" if rel else str(self.root)
        mtime_ns = _mtime(absolute)
        if mtime_ns is None:
            return
        known = self._dirs.get(rel)
        if (
            forced
            or known is None
            or known.racy
            or known.mtime_ns != mtime_ns
            or (
                known.ignore_mtime_ns is not None
                and _mtime(f"{absolute}/.gitignore") != known.ignore_mtime_ns
            )
        ):
            listed = self._list(rel, absolute, chain, mtime_ns)
            # rules that changed apply to everything below: list the subtree again
            forced = forced or known is None or listed.ignore_lines != known.ignore_lines
            if known is None or (listed.files, listed.subdirs) != (known.files, known.subdirs):
                self._changed = True
            self._dirs[rel] = known = listed
        seen.add(rel)
        inner = (*chain, known.ignore) if known.ignore is not None else chain
        for sub in known.subdirs:
            self._visit(sub, inner, forced=forced, seen=seen)

    def _list(
        self, rel: str, absolute: str, chain: tuple[_Ignore, ...], mtime_ns: int
    ) -> _Directory:
        prefix = rel + "/" if rel else ""
        ignore_mtime_ns = _mtime(f"{absolute}/.gitignore")
        lines = (
            read_gitignore(Path(absolute, ".gitignore")) if ignore_mtime_ns is not None else None
        )
        ignore = _Ignore(prefix, IgnoreRules.of_gitignore(lines)) if lines else None
        rules = (*chain, ignore) if ignore is not None else chain
        files: list[str] = []
        subdirs: list[str] = []
        try:
            with os.scandir(absolute) as entries:
                listed = [(e.name, _kind(e)) for e in entries]
        except OSError:
            listed = []
        for name, kind in listed:
            path = prefix + name
            if kind is _Kind.DIRECTORY:
                if name in NEVER_ENTERED or (self.root / path) in self.skip:
                    continue
                if not any(r.ignores(path, True) for r in rules):
                    subdirs.append(path)
            elif kind is _Kind.FILE and not any(r.ignores(path, False) for r in rules):
                files.append(path)
        newest = max(mtime_ns, ignore_mtime_ns or 0)
        racy = newest + RACY_NS > time.time_ns()
        return _Directory(
            mtime_ns, ignore_mtime_ns, ignore, lines, racy, sorted(files), sorted(subdirs)
        )


class _Kind(enum.Enum):
    FILE = "file"
    DIRECTORY = "directory"
    OTHER = "other"


def _kind(entry: os.DirEntry[str]) -> _Kind:
    """From the directory listing's own type field where the file system fills it in."""
    try:
        if entry.is_dir(follow_symlinks=False):
            return _Kind.DIRECTORY
        if entry.is_file(follow_symlinks=False):
            return _Kind.FILE
    except OSError:
        pass
    return _Kind.OTHER


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path, follow_symlinks=False).st_mtime_ns
    except OSError:
        return None
