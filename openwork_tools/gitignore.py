"""Gitignore-style patterns, matched in time linear in the path (tools.md §7 grep/glob).

The patterns come from the workspace's ``.gitignore`` files and from the model (glob's
``pattern``, grep's ``glob``): untrusted. Python's ``re`` backtracks — ``*a*a*a…*b`` against a
long name takes years — and holds the GIL while it does, so one such match froze the whole
daemon. pathspec's ``re2`` backend matches with RE2, which never backtracks. A line that is no
valid pattern (``[b-a]``) is skipped in a ``.gitignore``, as git skips it, and is invalid input
as a glob.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pathspec
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern


class InvalidPattern(ValueError):
    """A glob that is no gitignore-style pattern; the message says why."""


def _compiled(line: str) -> GitIgnoreSpecPattern:
    try:
        return GitIgnoreSpecPattern(line)
    except (re.error, ValueError) as exc:
        raise InvalidPattern(str(exc)) from exc


class IgnoreRules:
    """Gitignore rules (the last matching line decides; ``!`` re-includes), matched by RE2."""

    __slots__ = ("_spec",)

    def __init__(self, patterns: Iterable[GitIgnoreSpecPattern]) -> None:
        self._spec = pathspec.GitIgnoreSpec(patterns, backend="re2")

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
        return self._spec.match_file(path)
