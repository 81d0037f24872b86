"""Gitignore-style rules matched by RE2 (``openwork_tools.gitignore``; tools.md §7 grep/glob):
the answers of pathspec's ``re`` backend (of git where the two differ), without its
backtracking."""

from __future__ import annotations

import re

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openwork_tools.gitignore import IgnoreRules, InvalidPattern

CATASTROPHIC = "*a" * 20 + "*b"
"""Against a name of 100 ``a``: Python's ``re`` backtracks for years, holding the GIL."""

_PATTERN_PARTS = ("a", "b", "*", "**", "?", "/", "[ab]", "[!a]", "[b-a]", "\\*", " ")
_rule = st.lists(st.sampled_from(_PATTERN_PARTS), min_size=1, max_size=4).map("".join)
_path = st.lists(st.sampled_from(("a", "b", "ab", "/", " ")), min_size=1, max_size=5).map("".join)


@settings(max_examples=1000, deadline=None)
@given(lines=st.lists(_rule, min_size=1, max_size=4), paths=st.lists(_path, max_size=6))
def test_the_rules_select_what_pathspecs_re_backend_selects(
    lines: list[str], paths: list[str]
) -> None:
    """A ``.gitignore``'s lines select each path exactly as pathspec's ``re`` backend selects it
    with the lines that are valid patterns (an invalid one — ``[b-a]`` — matches nothing, as in
    git; pathspec would refuse the whole file). Negations are the next test's: there the ``re``
    backend and git differ."""
    valid = [line for line in lines if _valid(line)]
    expected = pathspec.GitIgnoreSpec.from_lines(valid, backend="simple")
    rules = IgnoreRules.of_gitignore(lines)
    for path in paths:
        assert rules.match_file(path) == expected.match_file(path), (lines, path)


def test_a_negation_selects_what_git_selects() -> None:
    """``!`` re-includes and the last matching line decides, as ``git check-ignore`` answers
    for these lines (pathspec's ``re`` backend answers False for ``aa/`` under ``!*``, ``aa``;
    git and RE2 answer True)."""
    rules = IgnoreRules.of_gitignore(["*.log", "!keep.log"])
    assert rules.match_file("a.log")
    assert not rules.match_file("keep.log") and not rules.match_file("x/keep.log")
    assert IgnoreRules.of_gitignore(["!*", "aa"]).match_file("aa/")


def _valid(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line], backend="simple")
    except (re.error, ValueError):
        return False
    return True


def test_an_invalid_glob_is_refused_and_an_invalid_gitignore_line_skipped() -> None:
    """A glob that is no pattern is the caller's error; in a ``.gitignore`` the other lines
    still apply (before, one such line made every glob and grep of the workspace fail)."""
    with pytest.raises(InvalidPattern, match="range"):
        IgnoreRules.of_glob("[b-a]")
    rules = IgnoreRules.of_gitignore(["[b-a]", "*.log"])
    assert rules.match_file("x.log") and not rules.match_file("x.txt")


def test_a_catastrophic_pattern_is_matched_at_once() -> None:
    """The pattern a hostile ``.gitignore`` or a model's glob can hold: answered (on the old
    ``re`` matching this call never returned, and no other thread of the daemon ran)."""
    rules = IgnoreRules.of_gitignore([CATASTROPHIC, "*.log"])
    assert not rules.match_file("a" * 100)
    assert rules.match_file("a" * 100 + "b")
    assert rules.match_file("x/y.log")


def test_a_name_that_is_not_utf8_is_matched_by_its_decodable_parts() -> None:
    """A name with an undecodable byte (a lone surrogate after ``surrogateescape``) is matched,
    not refused: RE2 takes UTF-8 only."""
    rules = IgnoreRules.of_gitignore(["*.txt", "!keep*"])
    assert rules.match_file("bad\udcff.txt")
    assert not rules.match_file("keep\udcff.txt")
    assert not rules.match_file("bad\udcff.md")


def test_a_gitignore_of_thousands_of_lines_is_matched_in_sets() -> None:
    """Some 2 000 patterns, or a few hundred long hostile ones, overflow one RE2 set: compiled
    as one (the first RE2 version, fce036c), such a ``.gitignore`` failed every glob and grep of
    its workspace. The rules are compiled in sets; the last matching line decides across them as
    pathspec's ``re`` backend decides."""
    lines = [
        "*.txt",
        *(f"dir{i}/file{i}.txt" for i in range(5000)),
        "!keep.txt",
        *([CATASTROPHIC] * 3000),
        "build/",
    ]
    rules = IgnoreRules.of_gitignore(lines)
    expected = pathspec.GitIgnoreSpec.from_lines(lines, backend="simple")
    paths = ["a.txt", "keep.txt", "dir7/keep.txt", "dir4999/file4999.txt", "x.md", "build/"]
    for path in paths:
        assert rules.match_file(path) == expected.match_file(path), path
    assert rules.match_file("a" * 100 + "b") and not rules.match_file("a" * 100)
