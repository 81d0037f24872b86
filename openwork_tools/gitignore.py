"""Gitignore-style patterns, matched in time linear in the path (tools.md §7 grep/glob).

The patterns come from the workspace's ``.gitignore`` files and from the model (glob's
``pattern``, grep's ``glob``): untrusted. Python's ``re`` backtracks — ``*a*a*a…*b`` against a
long name takes years — and holds the GIL while it does, so one such match froze the whole
daemon. pathspec's ``re2`` backend matches with RE2, which never backtracks. A line that is no
valid pattern (``[b-a]``) is skipped in a ``.gitignore``, as git skips it, and is invalid input
as a glob. The rules are compiled in RE2 sets of ``_SET_SIZE`` patterns (one set's memory is
bounded: a few thousand lines overflow it), and the last set with a matching line decides.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import pathspec
import re2
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from openwork_tools.regular_file import open_regular


def read_gitignore(path: Path) -> tuple[str, ...] | None:
    """The lines of the ``.gitignore`` at ``path`` (undecodable bytes as U+FFFD); None when it
    cannot be read or is no regular file (a FIFO there is skipped, not waited on)."""
    try:
        with open_regular(path) as handle:
            return tuple(handle.read().decode(errors="replace").splitlines())
    except OSError:
        return None


class InvalidPattern(ValueError):
    """A glob that is no gitignore-style pattern; the message says why."""


def _compiled(line: str) -> GitIgnoreSpecPattern:
    try:
        return GitIgnoreSpecPattern(line)
    except (re.error, ValueError) as exc:
        raise InvalidPattern(str(exc)) from exc


_SET_SIZE = 256
"""Patterns per RE2 set: a set's memory is bounded, and some 2 000 ordinary patterns (or a few
hundred long hostile ones) overflow one, which then fails to compile."""


def _sets(patterns: Sequence[GitIgnoreSpecPattern]) -> list[pathspec.GitIgnoreSpec]:
    """RE2 sets holding ``patterns`` in order; a set that fails to compile is split, and one
    pattern RE2 cannot hold alone matches nothing, like an invalid line."""
    try:
        return [pathspec.GitIgnoreSpec(patterns, backend="re2")]
    except re2.error:
        if len(patterns) == 1:
            return []
        half = len(patterns) // 2
        return _sets(patterns[:half]) + _sets(patterns[half:])


class IgnoreRules:
    """Gitignore rules (the last matching line decides; ``!`` re-includes), matched by RE2."""

    __slots__ = ("_specs",)

    def __init__(self, patterns: Sequence[GitIgnoreSpecPattern]) -> None:
        self._specs = tuple(
            spec
            for start in range(0, len(patterns), _SET_SIZE)
            for spec in _sets(patterns[start : start + _SET_SIZE])
        )

    @classmethod
    def of_gitignore(cls, lines: Iterable[str]) -> IgnoreRules:
        """A ``.gitignore`` file's lines; an invalid one matches nothing, as in git."""
        patterns: list[GitIgnoreSpecPattern] = []
        for line in lines:
            try:
                patterns.append(_compiled(line))
            except InvalidPattern:
                continue
        return cls(patterns)

    @classmethod
    def of_glob(cls, pattern: str) -> IgnoreRules:
        """One glob (``*.rs`` at any depth, ``src/*.rs`` anchored); raises ``InvalidPattern``."""
        return cls([_compiled(pattern)])

    def match_file(self, path: str) -> bool:
        """Whether the rules select ``path`` (relative, ``/``-separated; a directory ends in
        ``/``). A name that is not UTF-8 (lone surrogates, ``surrogateescape``) is matched with
        U+FFFD for each undecodable byte, as a ``.gitignore`` line holding one is read."""
        if not path.isascii():
            path = path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        if len(self._specs) == 1:
            return self._specs[0].match_file(path)
        for spec in reversed(self._specs):  # the last set with a matching line decides
            include = spec.check_file(path).include
            if include is not None:
                return include
        return False
