"""grep's matching: the lines of a file that a pattern matches, found by RE2 (tools.md §7 grep).

The pattern is the model's, so the engine is RE2 — the open point of tools.md §7 asks for an
engine equivalent to Rust's ``regex``, and RE2 is the one Rust's follows: the same syntax and a
match in time linear in the text. Python's ``re`` backtracks (``(a|aa)*c`` against a long line
takes years) and holds the GIL meanwhile, so one call froze the whole daemon. Python-only
syntax (look-around, back-references, ``\\Z``) is invalid input, as in Rust; ``\\w``, ``\\d``
and ``\\s`` are ASCII, ``\\pL`` and friends are Unicode.

A file is searched a chunk of whole lines at a time, each line as grep shows it: decoded as
UTF-8 with U+FFFD for what is not, its trailing ``\\r`` removed. ``never_nl`` keeps every match
inside one line and ``(?m)`` makes ``^``/``$`` line anchors, so the lines found are the lines a
search of each line alone finds, at one engine call per matching line instead of one per line.
"""

from __future__ import annotations

from typing import BinaryIO, Protocol

import re2

from openwork_tools.builtin.walk import StopCheck

MAX_SCAN_LINE = 64 * 1024 * 1024
"""A line longer than this (its ``\\n`` included) skips the file (tools.md §7 grep)."""
_CHUNK = 4 * 1024 * 1024


class _Match(Protocol):
    def start(self) -> int: ...


class LinePattern(Protocol):
    def search(self, text: bytes, pos: int) -> _Match | None: ...


class InvalidRegex(ValueError):
    """The pattern is no RE2 regular expression; the message is RE2's."""


def compile_pattern(pattern: str) -> LinePattern:
    """The model's pattern as a line pattern; raises ``InvalidRegex``."""
    options = re2.Options()
    options.never_nl = True
    options.log_errors = False
    try:
        compiled: LinePattern = re2.compile("(?m)" + pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "invalid pattern"
        raise InvalidRegex(reason.decode() if isinstance(reason, bytes) else str(reason)) from exc
    return compiled


def _searchable(block: bytes) -> bytes:
    """``block`` (whole lines; the file's last line may lack its ``\\n``) as grep shows each
    line: trailing ``\\r`` removed, valid UTF-8, each line ending in ``\\n``."""
    if b"\r" in block:
        lines = [line.rstrip(b"\r") for line in block.split(b"\n")]
        block = b"\n".join(lines)
    if not block.isascii():
        block = block.decode("utf-8", "replace").encode()
    return block if block.endswith(b"\n") else block + b"\n"


def _matches_in(
    text: bytes, before: int, pattern: LinePattern, stop: StopCheck
) -> list[tuple[int, str]]:
    """The matching lines of ``text`` (lines, each ending in ``\\n``), numbered after the
    ``before`` lines."""
    found: list[tuple[int, str]] = []
    pos = counted = 0
    number = before
    while (match := pattern.search(text, pos)) is not None and match.start() < len(text):
        # (a match at the very end is on the line after the last ``\n``: there is none)
        stop()
        start = text.rfind(b"\n", 0, match.start()) + 1
        end = text.find(b"\n", match.start())
        number += text.count(b"\n", counted, start)
        counted = start
        found.append((number + 1, text[start:end].decode()))
        pos = end + 1
    return found


def matching_lines(
    fh: BinaryIO, pattern: LinePattern, stop: StopCheck
) -> list[tuple[int, str]] | None:
    """(line number, text) of each matching line; None when the file holds a NUL (binary) or
    a line over ``MAX_SCAN_LINE``. Checks ``stop`` per chunk and per match."""
    found: list[tuple[int, str]] = []
    lines = 0
    pending = b""
    while True:
        stop()
        chunk = fh.read(_CHUNK)
        if b"\0" in chunk:
            return None
        data = pending + chunk if pending else chunk
        end = data.rfind(b"\n") + 1 if chunk else len(data)
        first = data.find(b"\n", 0, end) + 1 or end
        if first > MAX_SCAN_LINE or (end == 0 and len(data) > MAX_SCAN_LINE):
            return None
        block, pending = data[:end], data[end:]
        if block:
            text = _searchable(block)
            found += _matches_in(text, lines, pattern, stop)
            lines += text.count(b"\n")
        if not chunk:
            return found
