"""grep's line search (``openwork_tools/builtin/line_search.py``; tools.md §7 grep): RE2 over
chunks of whole lines finds exactly the lines a search of each line alone finds."""

from __future__ import annotations

import io
import math
import threading

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from openwork_tools.builtin import line_search
from openwork_tools.builtin.line_search import compile_pattern, matching_lines
from openwork_tools.builtin.walk import SearchStopped, StopCheck

NEVER = StopCheck(lambda: False, math.inf)
QUIET = re2.Options()
QUIET.log_errors = False


class _Trickle(io.RawIOBase):
    """A file whose reads return at most ``step`` bytes: lines cut at every place."""

    def __init__(self, data: bytes, step: int) -> None:
        self._data, self._step, self._at = data, step, 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        piece = self._data[self._at : self._at + min(self._step, size)]
        self._at += len(piece)
        return piece


def _shown(content: bytes) -> list[str]:
    """Each line as grep shows it: split at ``\\n``, trailing ``\\r`` removed, UTF-8 with
    U+FFFD for what is not."""
    lines = content.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return [line.rstrip(b"\r").decode("utf-8", "replace") for line in lines]


_content = st.lists(
    st.sampled_from([b"a", b"b", b"ab", b" ", b"\n", b"\r", b"\r\n", "é".encode(), b"\xff"]),
    max_size=30,
).map(b"".join)
_pattern = st.lists(
    st.sampled_from(["a", "b", "^", "$", ".", "\\b", "[^a]", "*", "?", "|", "(?i)A", "é", " "]),
    min_size=1,
    max_size=5,
).map("".join)


@settings(max_examples=600, deadline=None)
@given(content=_content, pattern=_pattern, step=st.integers(1, 8))
def test_the_lines_found_are_those_each_line_alone_matches(
    content: bytes, pattern: str, step: int
) -> None:
    try:
        alone = re2.compile(pattern, QUIET)
        compiled = compile_pattern(pattern)
    except (re2.error, line_search.InvalidRegex):
        return
    expected = [(n, line) for n, line in enumerate(_shown(content), 1) if alone.search(line)]
    assert matching_lines(_Trickle(content, step), compiled, NEVER) == expected


def test_a_pattern_python_backtracks_on_is_answered_at_once() -> None:
    """``(a|aa)*c`` against 60 ``a``: Python's ``re`` tries every split for years, holding the
    GIL (no other thread of the daemon runs); RE2 answers."""
    found = matching_lines(io.BytesIO(b"a" * 60 + b"\nac\n"), compile_pattern("(a|aa)*c"), NEVER)
    assert found == [(2, "ac")]


def test_a_nul_or_a_line_over_the_bound_skips_the_file_and_a_stop_ends_the_search() -> None:
    """tools.md §7 grep: a NUL means binary, a line over 64 MiB skips the file; the call's
    cancel is checked per chunk."""
    pattern = compile_pattern("x")
    assert matching_lines(io.BytesIO(b"x\n\0"), pattern, NEVER) is None
    long = b"x" * line_search.MAX_SCAN_LINE
    assert matching_lines(io.BytesIO(long + b"\nx\n"), pattern, NEVER) is None
    assert matching_lines(io.BytesIO(long[1:] + b"\nx\n"), pattern, NEVER) == [
        (1, long[1:].decode()),
        (2, "x"),
    ]
    cancelled = threading.Event()
    cancelled.set()
    stop = StopCheck(cancelled.is_set, math.inf)
    with pytest.raises(SearchStopped):
        matching_lines(io.BytesIO(b"x\n"), pattern, stop)
