"""Line diff for ``file_change`` artifacts: hunks with 3 lines of context (tools.md §8).

``difflib.SequenceMatcher`` stands in for Myers; above 4,000,000 trace units (old lines x new
lines) it falls back to one hunk between the common prefix and suffix, as the spec allows.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from openwork_tools.results import DiffHunk

CONTEXT = 3
TRACE_LIMIT = 4_000_000


@dataclass(frozen=True, slots=True)
class LineDiff:
    additions: int
    deletions: int
    hunks: tuple[DiffHunk, ...]


def _prefix_suffix(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    ops = []
    if start:
        ops.append(("equal", 0, start, 0, start))
    ops.append(("replace", start, len(a) - end, start, len(b) - end))
    if end:
        ops.append(("equal", len(a) - end, len(a), len(b) - end, len(b)))
    return ops


def _groups(a: list[str], b: list[str]) -> list[list[tuple[str, int, int, int, int]]]:
    if len(a) * len(b) <= TRACE_LIMIT:
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        return list(matcher.get_grouped_opcodes(CONTEXT))
    ops = _prefix_suffix(a, b)
    trimmed = []
    for index, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "equal" and index == 0:
            i1, j1 = max(i1, i2 - CONTEXT), max(j1, j2 - CONTEXT)
        elif tag == "equal":
            i2, j2 = min(i2, i1 + CONTEXT), min(j2, j1 + CONTEXT)
        trimmed.append((tag, i1, i2, j1, j2))
    return [trimmed]


def diff_lines(before: str, after: str) -> LineDiff:
    a = before.splitlines(keepends=True)
    b = after.splitlines(keepends=True)
    hunks: list[DiffHunk] = []
    additions = deletions = 0
    for group in _groups(a, b):
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + s for s in a[i1:i2]]
                continue
            lines += ["-" + s for s in a[i1:i2]]
            lines += ["+" + s for s in b[j1:j2]]
            deletions += i2 - i1
            additions += j2 - j1
        old_start, old_end = group[0][1], group[-1][2]
        new_start, new_end = group[0][3], group[-1][4]
        hunks.append(
            DiffHunk(
                old_start=old_start + 1 if old_end > old_start else old_start,
                old_lines=old_end - old_start,
                new_start=new_start + 1 if new_end > new_start else new_start,
                new_lines=new_end - new_start,
                lines=tuple(lines),
            )
        )
    return LineDiff(additions, deletions, tuple(hunks))
