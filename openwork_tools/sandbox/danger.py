"""Dangerous bash command detection for the approval card (permissions-sandbox.md §5 step 3).

Keys: ``rm_recursive_or_force``, ``find_delete``, ``git_clean_force``, ``nesting_too_deep``.
The command is split into simple commands at ``; & | ( ) ` $( newline``; a match spans the
whole simple command; offsets are UTF-16 code units. Nesting counts ``(``, ``{``, ``$(`` and
backtick levels; deeper than ``MAX_NESTING`` cannot be analysed and is reported as such.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from openwork_tools.prepared import DangerMatch

MAX_NESTING = 8
_SEPARATOR = re.compile(r"\$\(|[;&|\n()`]")
_PREFIX_WORDS = frozenset({"sudo", "xargs", "exec", "command", "nice", "time", "nohup", "env"})


def _utf16(text: str, index: int) -> int:
    return len(text[:index].encode("utf-16-le")) // 2


def _segments(command: str) -> Iterator[tuple[int, str]]:
    start = 0
    for sep in _SEPARATOR.finditer(command):
        yield start, command[start : sep.start()]
        start = sep.end()
    yield start, command[start:]


def _command_words(segment: str) -> list[str]:
    words = segment.split()
    while words and (words[0] in _PREFIX_WORDS or "=" in words[0] or words[0].startswith("-")):
        words.pop(0)
    if words:
        words[0] = words[0].rsplit("/", 1)[-1]
    return words


def _short_flag(word: str, letters: str) -> bool:
    return word.startswith("-") and not word.startswith("--") and any(c in word for c in letters)


def _key(words: list[str]) -> str | None:
    if not words:
        return None
    name, args = words[0], words[1:]
    if name == "rm" and any(_short_flag(w, "rRf") or w in ("--recursive", "--force") for w in args):
        return "rm_recursive_or_force"
    if name == "find" and (
        "-delete" in args or any(a == "-exec" and b == "rm" for a, b in itertools.pairwise(args))
    ):
        return "find_delete"
    if name == "git" and "clean" in args:
        after = args[args.index("clean") + 1 :]
        if any(_short_flag(w, "f") or w == "--force" for w in after):
            return "git_clean_force"
    return None


def _depth(command: str) -> int:
    depth = deepest = 0
    in_backtick = False
    for char in command:
        if char in "({":
            depth += 1
        elif char in ")}":
            depth = max(0, depth - 1)
        elif char == "`":
            in_backtick = not in_backtick
            depth += 1 if in_backtick else -1
        deepest = max(deepest, depth)
    return deepest


def detect_danger(command: str) -> DangerMatch | None:
    for start, segment in _segments(command):
        key = _key(_command_words(segment))
        if key is not None:
            begin = start + len(segment) - len(segment.lstrip())
            end = start + len(segment.rstrip())
            return DangerMatch(key, _utf16(command, begin), _utf16(command, end))
    if _depth(command) > MAX_NESTING:
        return DangerMatch("nesting_too_deep", 0, _utf16(command, len(command)))
    return None
