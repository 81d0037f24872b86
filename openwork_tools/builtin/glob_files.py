"""``glob``: files matching a pattern, newest first (tools.md §7 glob)."""

from __future__ import annotations

import asyncio
import heapq
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from openwork_tools.builtin import walk
from openwork_tools.builtin.listing import ListingSpill
from openwork_tools.context import ToolCallContext, ToolSessionContext
from openwork_tools.definition import RiskHint, Tool
from openwork_tools.gitignore import IgnoreRules, InvalidPattern
from openwork_tools.paths import CheckedPath, PathIntent, resolve_path
from openwork_tools.policy import Access
from openwork_tools.results import ToolErrorCode, ToolResult, ToolStatus
from openwork_tools.schema import ToolInput

MAX_RESULTS = 100

DESCRIPTION = (
    "Find files by glob pattern (gitignore-style, e.g. `**/*.py`, `src/*.ts`), newest first. "
    "Honours .gitignore and skips hidden files. At most 100 results."
)


class GlobInput(ToolInput):
    pattern: str = Field(min_length=1, description="Glob relative to path, e.g. `**/*.py`.")
    path: str = Field(default=".", min_length=1, description="Directory to search.")


@dataclass(slots=True)
class _Found:
    total: int = 0
    heap: list[tuple[int, int, str]] = field(default_factory=list)
    timed_out: bool = False


def scan(
    root: Path,
    session: ToolSessionContext,
    spec: IgnoreRules,
    stop: walk.StopCheck,
    spill: ListingSpill,
) -> _Found:
    found = _Found()
    try:
        for path in walk.walk_files(
            root,
            session.working_directory,
            stop,
            (*session.credential_paths, *session.secret_dirs),
        ):
            rel = path.relative_to(root).as_posix() if path != root else path.name
            if not spec.match_file(rel):
                continue
            shown = session.display_path(path)
            found.total += 1
            spill.add(shown)
            try:
                key = (1, path.stat().st_mtime_ns)
            except OSError:
                key = (0, 0)
            item = (*key, shown)
            if len(found.heap) < MAX_RESULTS:
                heapq.heappush(found.heap, item)
            else:
                heapq.heappushpop(found.heap, item)
    except walk.SearchStopped as stopped:
        if stopped.cancelled:
            raise
        found.timed_out = True
    spill.omitted = found.total > MAX_RESULTS
    return found


def render(found: _Found, spill: ListingSpill, pattern: str, where: str) -> str:
    if found.total == 0 and not found.timed_out:
        return f"No files match {pattern} in {where}"
    ordered = sorted(found.heap, key=lambda item: (-item[0], -item[1], item[2]))
    parts = ["\n".join(shown for _, _, shown in ordered)]
    if spill.omitted:
        parts.append(
            f"[showing the {len(ordered)} most recently modified of {found.total} files"
            f"{spill.saved_note()}]"
        )
    if found.timed_out:
        parts.append(
            f"[at least {found.total} files; search timed out after "
            f"{walk.SEARCH_TIMEOUT_S:g}s — narrow the path or pattern]"
        )
    return "\n\n".join(p for p in parts if p)


class GlobTool(Tool[GlobInput]):
    input_model = GlobInput

    def __init__(self) -> None:
        super().__init__("glob", DESCRIPTION, RiskHint.READ_ONLY)

    async def execute(
        self, session: ToolSessionContext, call: ToolCallContext, tool_input: GlobInput
    ) -> ToolResult:
        try:
            spec = IgnoreRules.of_glob(tool_input.pattern)
        except InvalidPattern as exc:
            return ToolResult.fail(
                ToolErrorCode.INVALID_ARGUMENTS,
                f"invalid tool input: pattern: not a valid glob: {exc}",
            )
        checked = await asyncio.to_thread(
            resolve_path, tool_input.path, Access.READ, PathIntent.MUST_EXIST, call.policy, session
        )
        if not isinstance(checked, CheckedPath):
            return checked
        stop = walk.make_stop(call.cancel.is_set, call.remaining(), walk.SEARCH_TIMEOUT_S)
        spill = ListingSpill(session.spill_dir, call.call_id)
        try:
            found = await walk.run_search(
                lambda guarded: scan(checked.real, session, spec, guarded, spill), stop
            )
        except walk.SearchStopped:
            await asyncio.to_thread(lambda: spill.finish(keep=False))
            return ToolResult.fail(
                ToolErrorCode.CANCELLED, "glob was cancelled.", status=ToolStatus.CANCELLED
            )
        await asyncio.to_thread(lambda: spill.finish(keep=spill.omitted))
        return ToolResult.ok(render(found, spill, tool_input.pattern, checked.display))
