"""``read``: a page of a UTF-8 text file with line numbers (tools.md §7 read, §7.4)."""

from __future__ import annotations

import codecs
import hashlib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import Field

from openwork_tools.builtin.walk import SearchStopped, StopCheck, make_stop, run_search
from openwork_tools.context import ToolCallContext, ToolSessionContext
from openwork_tools.definition import RiskHint, Tool
from openwork_tools.paths import CheckedPath, PathIntent, resolve_path
from openwork_tools.policy import Access
from openwork_tools.regular_file import open_regular
from openwork_tools.results import (
    FOOTER_RESERVE,
    RESULT_TEXT_LIMIT,
    ToolErrorCode,
    ToolResult,
    ToolStatus,
)
from openwork_tools.schema import ToolInput

MAX_LINES = 2000
MAX_LINE_CHARS = 2000
KEEP_LINE_BYTES = 8000
CONTENT_BUDGET = RESULT_TEXT_LIMIT - FOOTER_RESERVE
LINE_TRUNCATED = f"... (line truncated to {MAX_LINE_CHARS} chars)"
EMPTY_FILE = "[empty file]"
_CHUNK = 1 << 20

DESCRIPTION = (
    "Read a UTF-8 text file. Lines are shown as `{line number}\\t{content}`. Reads at most "
    "2000 lines or about 32 KB per call; a footer tells you the offset to continue from. "
    "You must read an existing file before write or edit may change it."
)


class ReadInput(ToolInput):
    path: str = Field(min_length=1, description="Absolute, or relative to the workspace root.")
    offset: int = Field(default=1, ge=0, description="1-based first line; 0 is treated as 1.")
    limit: Annotated[int, Field(ge=1, le=MAX_LINES)] = Field(
        default=MAX_LINES, description="Maximum number of lines (1-2000)."
    )


@dataclass(frozen=True, slots=True)
class _Page:
    lines: tuple[str, ...]
    total: int
    sha256: str
    byte_capped: bool


class _ReadFailure(Exception):
    pass


def _render(number: int, raw: bytes, full_len: int) -> str:
    text = raw.decode("utf-8", errors="ignore")
    if text.endswith("\r") and full_len == len(raw):
        text = text[:-1]
    if full_len > KEEP_LINE_BYTES or len(text) > MAX_LINE_CHARS:
        text = text[:MAX_LINE_CHARS] + LINE_TRUNCATED
    return f"{number}\t{text}"


def read_page(real: Path, display: str, offset: int, limit: int, stop: StopCheck) -> _Page:
    """Stream the whole file: hash, count lines, validate UTF-8, keep only the page (§7 read).
    ``stop`` is checked per 1 MiB: a cancelled call's thread ends there, not at the end of a
    file of many gigabytes."""
    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder("utf-8")()
    lines: list[str] = []
    budget = CONTENT_BUDGET
    capped = False
    number = 0
    current = bytearray()
    current_len = 0
    pending = False

    def finish_line() -> None:
        nonlocal budget, capped
        if capped or number < offset or number >= offset + limit:
            return
        rendered = _render(number, bytes(current), current_len)
        cost = len(rendered.encode()) + 1
        if cost > budget:
            capped = True
            return
        budget -= cost
        lines.append(rendered)

    try:
        with open_regular(real) as fh:
            while chunk := fh.read(_CHUNK):
                stop()
                digest.update(chunk)
                if b"\0" in chunk:
                    raise _ReadFailure(
                        f"{display} is a binary file (it contains NUL bytes); read only shows "
                        "text. Use grep or bash to inspect it."
                    )
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError as exc:
                    raise _ReadFailure(
                        f"{display} is not valid UTF-8 text; read only shows UTF-8. "
                        "Use bash (for example `file` or `iconv`) to inspect it."
                    ) from exc
                start = 0
                while start < len(chunk):
                    if not pending:
                        number += 1
                        current.clear()
                        current_len = 0
                        pending = True
                    nl = chunk.find(b"\n", start)
                    end = len(chunk) if nl < 0 else nl
                    piece = chunk[start:end]
                    if len(current) < KEEP_LINE_BYTES:
                        current += piece[: KEEP_LINE_BYTES - len(current)]
                    current_len += len(piece)
                    if nl < 0:
                        break
                    finish_line()
                    pending = False
                    start = nl + 1
            if pending:
                finish_line()
            decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise _ReadFailure(
            f"{display} is not valid UTF-8 text; read only shows UTF-8. "
            "Use bash (for example `file` or `iconv`) to inspect it."
        ) from exc
    except IsADirectoryError as exc:
        raise _ReadFailure(f"{display} is a directory; use list to see its entries.") from exc
    except OSError as exc:
        raise _ReadFailure(f"Cannot read {display}: {exc.strerror or exc}") from exc
    return _Page(tuple(lines), number, digest.hexdigest(), capped)


def render_page(page: _Page, offset: int, display: str) -> str | None:
    """The model-visible text, or None when ``offset`` is past the end."""
    if page.total == 0:
        return EMPTY_FILE
    if offset > page.total:
        return None
    body = "\n".join(page.lines)
    last = offset + len(page.lines) - 1
    if last >= page.total:
        return body
    cap = "; stopped at 32 KB" if page.byte_capped else ""
    footer = (
        f"[showing lines {offset}-{last} of {page.total}{cap}. Continue with offset={last + 1}]"
    )
    return f"{body}\n\n{footer}"


def _checked_page(
    tool_input: ReadInput,
    offset: int,
    call: ToolCallContext,
    session: ToolSessionContext,
    stop: StopCheck,
) -> tuple[CheckedPath, _Page] | ToolResult:
    """Resolve and check the path, then read its page (blocking: both on one worker thread)."""
    checked = resolve_path(
        tool_input.path, Access.READ, PathIntent.MUST_EXIST, call.policy, session
    )
    if not isinstance(checked, CheckedPath):
        return checked
    try:
        return checked, read_page(checked.real, checked.display, offset, tool_input.limit, stop)
    except _ReadFailure as failure:
        return ToolResult.fail(ToolErrorCode.EXECUTION_FAILED, str(failure))


class ReadTool(Tool[ReadInput]):
    input_model = ReadInput

    def __init__(self) -> None:
        super().__init__("read", DESCRIPTION, RiskHint.READ_ONLY)

    async def execute(
        self, session: ToolSessionContext, call: ToolCallContext, tool_input: ReadInput
    ) -> ToolResult:
        offset = max(1, tool_input.offset)
        stop = make_stop(call.cancel.is_set, call.remaining(), math.inf)
        try:  # one worker-thread hop for the check and the read
            read = await run_search(
                lambda guarded: _checked_page(tool_input, offset, call, session, guarded), stop
            )
        except SearchStopped as stopped:
            if stopped.cancelled:
                return ToolResult.fail(
                    ToolErrorCode.CANCELLED, "read was cancelled.", status=ToolStatus.CANCELLED
                )
            return ToolResult.fail(ToolErrorCode.TIMEOUT, "read timed out.")
        if isinstance(read, ToolResult):
            return read
        checked, page = read
        text = render_page(page, offset, checked.display)
        if text is None:
            return ToolResult.fail(
                ToolErrorCode.EXECUTION_FAILED,
                f"offset {offset} is past the end of {checked.display} ({page.total} lines). "
                f"Use an offset between 1 and {page.total}.",
            )
        session.observations.record(checked.real, page.sha256)
        return ToolResult.ok(text)
