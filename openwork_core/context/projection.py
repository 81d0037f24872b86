"""Per-item projection of oversized Tool Results (context-window.md §4.2).

A tool message (role tool, one result) is *over the limit* when its estimate — ⌈compact JSON bytes
of the message / 4⌉, measured after pruning — exceeds 8 000 tokens, i.e. the message is more than
32 000 bytes. It is then truncated, and the truncated message is always at most 8 000 tokens
(unless its id and name alone exceed that):

1. every data block is removed; the text blocks are joined with ``"\\n"``;
2. the *envelope* is the JSON size of the message whose output is the single text
   ``"\\n" + marker + "\\n"``, with the marker written for the largest possible counts;
   the *budget* is 32 000 − envelope bytes of JSON-encoded text (escapes count: ``"`` is 2 bytes,
   ``é`` 2, ``😀`` 4, ``\\n`` 2, other control characters 6);
3. when the whole text fits the budget it is kept, followed by ``"\\n" + marker``;
   otherwise the text keeps its longest prefix that fits 75 % of the budget (⌊budget × 3 / 4⌋)
   and its longest suffix that fits the remaining 25 %, joined as
   ``head + "\\n" + marker + "\\n" + tail``.

The marker is fixed (``TRUNCATION_MARKER``):
``... [tool result truncated to fit the context window: <c> characters and <d> data blocks
omitted]`` (one line) with ``<c>`` code points of text and ``<d>`` data blocks removed. The
output is a pure function of the input, so it is byte-stable across requests, and projecting
it again changes nothing.
"""

from __future__ import annotations

import orjson

from openwork_chat_state.messages import (
    DataBlock,
    Message,
    Role,
    TextBlock,
    ToolResultBlock,
)
from openwork_core.context.prune import result_text
from openwork_core.context.wire import BYTES_PER_TOKEN, json_size

TOOL_RESULT_TOKEN_LIMIT = 8_000
TOOL_RESULT_BYTE_LIMIT = TOOL_RESULT_TOKEN_LIMIT * BYTES_PER_TOKEN
HEAD_SHARE_NUMERATOR = 3
HEAD_SHARE_DENOMINATOR = 4

_CHUNK = 512

TRUNCATION_MARKER = (
    "... [tool result truncated to fit the context window: "
    "{chars} characters and {data_blocks} data blocks omitted]"
)


def tool_message(result: ToolResultBlock) -> Message:
    """The canonical request form of one result: a tool message holding just that block."""
    return Message(role=Role.TOOL, content=(result,))


def is_over_limit(message_size: int) -> bool:
    """More than 8 000 tokens, i.e. more than 32 000 bytes."""
    return message_size > TOOL_RESULT_BYTE_LIMIT


def _encoded_len(text: str) -> int:
    return len(orjson.dumps(text)) - 2


def _search(piece: str, budget: int, *, from_end: bool) -> int:
    """The largest k with encoded(k code points of ``piece``, from its start or end) ≤ budget."""
    lo, hi = 0, min(len(piece), budget)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        part = piece[len(piece) - mid :] if from_end else piece[:mid]
        if _encoded_len(part) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _longest_prefix(text: str, budget: int) -> int:
    """The largest k with encoded(text[:k]) ≤ budget. JSON escaping is per code point, so the
    cost is additive: scan fixed chunks, then search inside the chunk that crosses the budget
    (work proportional to the kept text, not to the whole result)."""
    used = start = 0
    while start < len(text):
        chunk = text[start : start + _CHUNK]
        cost = _encoded_len(chunk)
        if used + cost > budget:
            return start + _search(chunk, budget - used, from_end=False)
        used += cost
        start += len(chunk)
    return len(text)


def _longest_suffix(text: str, budget: int) -> int:
    """The largest k with encoded(text[len(text) - k:]) ≤ budget (mirror of the prefix scan)."""
    used = kept = 0
    while kept < len(text):
        end = len(text) - kept
        chunk = text[max(0, end - _CHUNK) : end]
        cost = _encoded_len(chunk)
        if used + cost > budget:
            return kept + _search(chunk, budget - used, from_end=True)
        used += cost
        kept += len(chunk)
    return len(text)


def _marker(chars: int, data_blocks: int) -> str:
    return TRUNCATION_MARKER.format(chars=chars, data_blocks=data_blocks)


def truncate_tool_result(result: ToolResultBlock) -> ToolResultBlock:
    """The projected form of an over-limit result (see the module docstring)."""
    text = result_text(result)
    data_blocks = sum(1 for b in result.output if isinstance(b, DataBlock))
    widest = _marker(len(text), data_blocks)
    envelope = json_size(
        tool_message(
            ToolResultBlock(
                id=result.id,
                name=result.name,
                output=(TextBlock(text=f"\n{widest}\n"),),
                state=result.state,
            )
        )
    )
    budget = max(0, TOOL_RESULT_BYTE_LIMIT - envelope)
    if len(text) <= budget and _encoded_len(text) <= budget:
        projected = f"{text}\n{_marker(0, data_blocks)}"
    else:
        head_budget = budget * HEAD_SHARE_NUMERATOR // HEAD_SHARE_DENOMINATOR
        head = _longest_prefix(text, head_budget)
        tail = _longest_suffix(text, budget - head_budget)
        omitted = len(text) - head - tail
        tail_text = text[len(text) - tail :] if tail else ""
        projected = f"{text[:head]}\n{_marker(omitted, data_blocks)}\n{tail_text}"
    return ToolResultBlock(
        id=result.id,
        name=result.name,
        output=(TextBlock(text=projected),),
        state=result.state,
    )
