"""``grep``: regex search over the workspace (tools.md §7 grep); the matching, by RE2, is
``line_search.py``'s."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import Field

from openwork_tools.builtin import walk
from openwork_tools.builtin.line_search import (
    InvalidRegex,
    LinePattern,
    compile_pattern,
    matching_lines,
)
from openwork_tools.builtin.listing import ListingSpill
from openwork_tools.context import ToolCallContext, ToolSessionContext
from openwork_tools.definition import RiskHint, Tool
from openwork_tools.gitignore import IgnoreRules, InvalidPattern
from openwork_tools.paths import CheckedPath, PathIntent, resolve_path
from openwork_tools.policy import Access
from openwork_tools.regular_file import open_regular
from openwork_tools.results import ToolErrorCode, ToolResult, ToolStatus
from openwork_tools.schema import ToolInput

MAX_LINES = 250
MAX_LINES_PER_FILE = 50
MAX_LINE_BYTES = 2000
MAX_FILES = 250
LINE_TRUNCATED = f"... (line truncated to {MAX_LINE_BYTES} bytes)"

DESCRIPTION = (
    "Search file contents with a regular expression. Honours .gitignore, skips hidden and "
    "binary files. outputMode: content (matching lines, default), files_with_matches, count."
)


class GrepInput(ToolInput):
    pattern: str = Field(min_length=1, description="Regular expression.")
    path: str = Field(default=".", min_length=1, description="File or directory to search.")
    glob: str | None = Field(
        default=None, description="Only files matching this glob, relative to path."
    )
    output_mode: Literal["content", "files_with_matches", "count"] = "content"


@dataclass(slots=True)
class _Scan:
    mode: str
    spill: ListingSpill
    total_lines: int = 0
    total_files: int = 0
    shown_lines: int = 0
    groups: list[str] = field(default_factory=list)
    timed_out: bool = False


def _cut_line(text: str) -> str:
    data = text.encode()
    if len(data) <= MAX_LINE_BYTES:
        return text
    return data[:MAX_LINE_BYTES].decode(errors="ignore") + LINE_TRUNCATED


def _file_matches(
    path: Path, pattern: LinePattern, stop: walk.StopCheck
) -> list[tuple[int, str]] | None:
    """Matching (line number, text); None when binary, unreadable or a line exceeds 64 MiB."""
    try:
        with open_regular(path) as fh:
            return matching_lines(fh, pattern, stop)
    except OSError:
        return None


def scan(
    root: Path,
    session: ToolSessionContext,
    tool_input: GrepInput,
    pattern: LinePattern,
    only: IgnoreRules | None,
    stop: walk.StopCheck,
    spill: ListingSpill,
) -> _Scan:
    state = _Scan(tool_input.output_mode, spill)
    only = only if root.is_dir() else None
    try:
        for path in walk.walk_files(
            root,
            session.working_directory,
            stop,
            (*session.credential_paths, *session.secret_dirs),
        ):
            if only is not None and not only.match_file(path.relative_to(root).as_posix()):
                continue
            matches = _file_matches(path, pattern, stop)
            if not matches:
                continue
            shown = session.display_path(path)
            state.total_files += 1
            state.total_lines += len(matches)
            _add_file(state, shown, matches)
    except walk.SearchStopped as stopped:
        if stopped.cancelled:
            raise
        state.timed_out = True
    return state


def _add_file(state: _Scan, shown: str, matches: list[tuple[int, str]]) -> None:
    if state.mode == "content":
        for number, line in matches:
            state.spill.add(f"{shown}:{number}:{line}")
        room = min(MAX_LINES_PER_FILE, MAX_LINES - state.shown_lines)
        if room <= 0:
            state.spill.omitted = True
            return
        lines = [shown] + [f"{n}:{_cut_line(t)}" for n, t in matches[:room]]
        state.shown_lines += min(room, len(matches))
        if len(matches) > room:
            state.spill.omitted = True
            if room == MAX_LINES_PER_FILE:
                lines.append(f"(+{len(matches) - room} more matching lines in this file)")
        state.groups.append("\n".join(lines))
        return
    entry = shown if state.mode == "files_with_matches" else f"{shown}:{len(matches)}"
    state.spill.add(entry)
    if state.total_files <= MAX_FILES:
        state.groups.append(entry)
    else:
        state.spill.omitted = True


def render(state: _Scan, pattern: str, where: str) -> str:
    if state.total_files == 0 and not state.timed_out:
        return f"No matches for /{pattern}/ in {where}"
    sep = "\n\n" if state.mode == "content" else "\n"
    text = sep.join(state.groups)
    footers: list[str] = []
    totals = f"{state.total_lines} matching lines in {state.total_files} files"
    if state.mode != "content":
        totals = f"{state.total_files} files with matches"
    if state.spill.omitted:
        shown = state.shown_lines if state.mode == "content" else len(state.groups)
        footers.append(f"[showing {shown} of {totals}{state.spill.saved_note()}]")
    if state.timed_out:
        footers.append(
            f"[at least {totals}; search timed out after "
            f"{walk.SEARCH_TIMEOUT_S:g}s — narrow the path or glob]"
        )
    return "\n\n".join(p for p in (text, *footers) if p)


class GrepTool(Tool[GrepInput]):
    input_model = GrepInput

    def __init__(self) -> None:
        super().__init__("grep", DESCRIPTION, RiskHint.READ_ONLY)

    async def execute(
        self, session: ToolSessionContext, call: ToolCallContext, tool_input: GrepInput
    ) -> ToolResult:
        try:
            pattern = compile_pattern(tool_input.pattern)
        except InvalidRegex as exc:
            return ToolResult.fail(
                ToolErrorCode.INVALID_ARGUMENTS,
                f"invalid tool input: pattern: not a valid regular expression: {exc}",
            )
        try:
            only = IgnoreRules.of_glob(tool_input.glob) if tool_input.glob else None
        except InvalidPattern as exc:
            return ToolResult.fail(
                ToolErrorCode.INVALID_ARGUMENTS,
                f"invalid tool input: glob: not a valid glob: {exc}",
            )
        checked = await asyncio.to_thread(
            resolve_path, tool_input.path, Access.READ, PathIntent.MUST_EXIST, call.policy, session
        )
        if not isinstance(checked, CheckedPath):
            return checked
        stop = walk.make_stop(call.cancel.is_set, call.remaining(), walk.SEARCH_TIMEOUT_S)
        spill = ListingSpill(session.spill_dir, call.call_id)
        try:
            state = await walk.run_search(
                lambda guarded: scan(
                    checked.real, session, tool_input, pattern, only, guarded, spill
                ),
                stop,
            )
        except walk.SearchStopped:
            await asyncio.to_thread(lambda: spill.finish(keep=False))
            return ToolResult.fail(
                ToolErrorCode.CANCELLED, "grep was cancelled.", status=ToolStatus.CANCELLED
            )
        await asyncio.to_thread(lambda: spill.finish(keep=spill.omitted))
        return ToolResult.ok(render(state, tool_input.pattern, checked.display))
