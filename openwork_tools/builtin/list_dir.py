"""``list``: one directory level, sorted by name, with stable paging (tools.md §7 list)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Annotated

from pydantic import Field

from openwork_tools.context import ToolCallContext, ToolSessionContext
from openwork_tools.definition import RiskHint, Tool
from openwork_tools.paths import CheckedPath, PathIntent, resolve_path
from openwork_tools.policy import Access
from openwork_tools.results import ToolErrorCode, ToolResult
from openwork_tools.schema import ToolInput

DEFAULT_LIMIT = 200
MAX_LIMIT = 2000
EMPTY_DIRECTORY = "[empty directory]"

DESCRIPTION = (
    "List one directory level, sorted by name; directories end with `/`. Hidden entries are "
    "included and .gitignore is not applied. Page with offset/limit."
)


class ListInput(ToolInput):
    path: str = Field(default=".", min_length=1, description="Directory; default the workspace.")
    offset: int = Field(default=0, ge=0, description="0-based index into the sorted entries.")
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = Field(
        default=DEFAULT_LIMIT, description="Maximum entries (1-2000)."
    )


def list_entries(real: Path) -> list[str]:
    entries: list[str] = []
    with os.scandir(real) as it:
        for entry in it:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            entries.append(entry.name + "/" if is_dir else entry.name)
    entries.sort(key=lambda name: name.rstrip("/"))
    return entries


def render_listing(entries: list[str], offset: int, limit: int) -> str:
    if not entries:
        return EMPTY_DIRECTORY
    if offset >= len(entries):
        return (
            f"[no entries at offset {offset}; the directory has {len(entries)} entries. "
            "Use a smaller offset]"
        )
    page = entries[offset : offset + limit]
    text = "\n".join(page)
    following = offset + len(page)
    if following < len(entries):
        text += (
            f"\n\n[showing {len(page)} entries from offset {offset}; "
            f"more entries available at offset {following}]"
        )
    return text


class ListTool(Tool[ListInput]):
    input_model = ListInput

    def __init__(self) -> None:
        super().__init__("list", DESCRIPTION, RiskHint.READ_ONLY)

    async def execute(
        self, session: ToolSessionContext, call: ToolCallContext, tool_input: ListInput
    ) -> ToolResult:
        checked = await asyncio.to_thread(
            resolve_path, tool_input.path, Access.READ, PathIntent.MUST_EXIST, call.policy, session
        )
        if not isinstance(checked, CheckedPath):
            return checked
        try:
            entries = await asyncio.to_thread(list_entries, checked.real)
        except NotADirectoryError:
            return ToolResult.fail(
                ToolErrorCode.EXECUTION_FAILED,
                f"{checked.display} is a file, not a directory; use read to see its content.",
            )
        except OSError as exc:
            return ToolResult.fail(
                ToolErrorCode.EXECUTION_FAILED,
                f"Cannot list {checked.display}: {exc.strerror or exc}",
            )
        return ToolResult.ok(render_listing(entries, tool_input.offset, tool_input.limit))
