"""Pruning old Tool Results in the request copy (context-window.md §4.2, compaction.md §2).

A Tool Result whose message sequence is at or below the watermark and whose text — its text blocks
joined with ``"\\n"``, measured in Unicode code points — exceeds 8 192 characters keeps:

    first 4 096 characters + "\\n" + marker + "\\n" + last 1 024 characters

as one text block, followed by its data blocks unchanged and in order. The marker is fixed:

    ... [tool result pruned: <omitted> characters omitted. Full result at <spill dir>/<id>.txt
    — read it if you still need it]                       (on one line; with a spill directory)
    ... [tool result pruned: <omitted> characters omitted]          (no spill directory)

where ``<omitted>`` = length − 4 096 − 1 024 and ``<id>`` is the tool call id with every character
outside ``[A-Za-z0-9_-]`` replaced by ``_``. The output is a pure function of the result and the
spill directory, so it is byte-stable across requests. Stored results are never changed.
"""

from __future__ import annotations

import posixpath
import re

from openwork_chat_state.messages import DataBlock, TextBlock, ToolOutputBlock, ToolResultBlock

PRUNE_THRESHOLD_CHARS = 8_192
PRUNE_HEAD_CHARS = 4_096
PRUNE_TAIL_CHARS = 1_024
TEXT_PART_SEPARATOR = "\n"

PRUNE_MARKER_WITH_SPILL = (
    "... [tool result pruned: {omitted} characters omitted. "
    "Full result at {path} — read it if you still need it]"
)
PRUNE_MARKER_WITHOUT_SPILL = "... [tool result pruned: {omitted} characters omitted]"

_UNSAFE_FILE_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def spill_file_name(tool_call_id: str) -> str:
    """``<id>.txt`` with characters outside ``[A-Za-z0-9_-]`` replaced by ``_``."""
    return f"{_UNSAFE_FILE_CHARS.sub('_', tool_call_id)}.txt"


def spill_path(spill_dir: str, tool_call_id: str) -> str:
    return posixpath.join(spill_dir, spill_file_name(tool_call_id))


def prune_marker(omitted: int, tool_call_id: str, spill_dir: str | None) -> str:
    if spill_dir is None:
        return PRUNE_MARKER_WITHOUT_SPILL.format(omitted=omitted)
    return PRUNE_MARKER_WITH_SPILL.format(omitted=omitted, path=spill_path(spill_dir, tool_call_id))


def result_text(result: ToolResultBlock) -> str:
    """The text blocks of a result joined with ``"\\n"``."""
    return TEXT_PART_SEPARATOR.join(b.text for b in result.output if isinstance(b, TextBlock))


def prune_tool_result(result: ToolResultBlock, spill_dir: str | None) -> ToolResultBlock | None:
    """The pruned form of ``result``, or ``None`` when its text is at most 8 192 characters."""
    text = result_text(result)
    if len(text) <= PRUNE_THRESHOLD_CHARS:
        return None
    omitted = len(text) - PRUNE_HEAD_CHARS - PRUNE_TAIL_CHARS
    pruned = (
        f"{text[:PRUNE_HEAD_CHARS]}\n{prune_marker(omitted, result.id, spill_dir)}\n"
        f"{text[-PRUNE_TAIL_CHARS:]}"
    )
    data: tuple[ToolOutputBlock, ...] = tuple(b for b in result.output if isinstance(b, DataBlock))
    return ToolResultBlock(
        id=result.id,
        name=result.name,
        output=(TextBlock(text=pruned), *data),
        state=result.state,
    )
