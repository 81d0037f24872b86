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

from openwork_chat_state.messages import DataBlock, TextBlock, ToolOutputBlock, ToolResultBlock
from openwork_tools.spill import spill_file_name

PRUNE_THRESHOLD_CHARS = 8_192
PRUNE_HEAD_CHARS = 4_096
PRUNE_TAIL_CHARS = 1_024
TEXT_PART_SEPARATOR = "\n"

PRUNE_MARKER_WITH_SPILL = (
    "... [tool result pruned: {omitted} characters omitted. "
    "Full result at {path} — read it if you still need it]"
)
PRUNE_MARKER_WITHOUT_SPILL = "... [tool result pruned: {omitted} characters omitted]"


def spill_path(spill_dir: str, tool_call_id: str) -> str:
    """``posixpath.join(spill_dir, <id>.txt)``, spelled out: the file name never starts with
    ``/``, so the join is a concatenation with at most one separator."""
    name = spill_file_name(tool_call_id)
    if not spill_dir or spill_dir.endswith("/"):
        return spill_dir + name
    return f"{spill_dir}/{name}"


def prune_marker(omitted: int, tool_call_id: str, spill_dir: str | None) -> str:
    """``PRUNE_MARKER_WITH_SPILL`` / ``PRUNE_MARKER_WITHOUT_SPILL`` filled in (as f-strings:
    ``str.format`` with keywords costs a cold prepare more than the rest of the marker)."""
    if spill_dir is None:
        return f"... [tool result pruned: {omitted} characters omitted]"
    path = spill_path(spill_dir, tool_call_id)
    return (
        f"... [tool result pruned: {omitted} characters omitted. "
        f"Full result at {path} — read it if you still need it]"
    )


def result_text(result: ToolResultBlock) -> str:
    """The text blocks of a result joined with ``"\\n"``."""
    output = result.output
    if len(output) == 1 and type(output[0]) is TextBlock:  # the usual result: one text, no copy
        return output[0].text
    return TEXT_PART_SEPARATOR.join(b.text for b in output if isinstance(b, TextBlock))


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
    output: tuple[ToolOutputBlock, ...] = (TextBlock(text=pruned),)
    if len(result.output) != 1 or type(result.output[0]) is not TextBlock:
        output += tuple(b for b in result.output if isinstance(b, DataBlock))
    return ToolResultBlock(id=result.id, name=result.name, output=output, state=result.state)
