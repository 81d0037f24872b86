"""The per-item part of the request copy, computed once per item and cached (DESIGN.md §6).

For each Conversation item, in order, the steps of context-window.md §4.2 that depend on that item
alone: prune (tool results at or below the watermark), per-item projection, and the data-block
filter of normalization. The result, an ``ItemForm`` holding the message(s) to send and their
compact-JSON sizes, is a pure function of the item and of (pruned?, spill dir, accepts data
blocks?), so it is memoized in ``item._memo`` under a key naming those parameters. Items are
immutable: a later request over the same items reuses every form and serializes nothing again.
"""

from __future__ import annotations

from collections.abc import Iterable

from openwork_chat_state.item import ConversationItem, RealOrigin
from openwork_chat_state.messages import Role, ToolResultBlock
from openwork_core.context.normalize import (
    ItemForm,
    ResultForm,
    filter_message_data_blocks,
    strip_result_data_blocks,
)
from openwork_core.context.projection import is_over_limit, tool_message, truncate_tool_result
from openwork_core.context.provenance import provenance_of
from openwork_core.context.prune import prune_tool_result
from openwork_core.context.wire import json_size

_MEMO_PREFIX = "openwork_core.context.form"


def memo_key(*, pruned: bool, spill_dir: str | None, accepts_data_blocks: bool) -> str:
    return f"{_MEMO_PREFIX}:{int(pruned)}:{int(accepts_data_blocks)}:{spill_dir!r}"


def result_form(
    result: ToolResultBlock, *, prune: bool, spill_dir: str | None, accepts_data_blocks: bool
) -> ResultForm:
    """Prune → project → strip data blocks, for one result."""
    pruned_result = prune_tool_result(result, spill_dir) if prune else None
    current = pruned_result or result
    message = tool_message(current)
    size = json_size(message)
    truncated = is_over_limit(size)
    if truncated:
        current = truncate_tool_result(current)
    dropped = 0
    if not accepts_data_blocks:
        current, dropped = strip_result_data_blocks(current)
    if truncated or dropped:
        message = tool_message(current)
        size = json_size(message)
    return ResultForm(
        call_id=result.id,
        message=message,
        size=size,
        pruned=pruned_result is not None,
        truncated=truncated,
        dropped_data_blocks=dropped,
    )


def compute_item_form(
    item: ConversationItem, *, prune: bool, spill_dir: str | None, accepts_data_blocks: bool
) -> ItemForm:
    message = item.message
    provenance = provenance_of(item)
    if message.role is Role.TOOL:
        results = tuple(
            result_form(
                b, prune=prune, spill_dir=spill_dir, accepts_data_blocks=accepts_data_blocks
            )
            for b in message.content
            if isinstance(b, ToolResultBlock)
        )
        return ItemForm(message=message, size=0, provenance=provenance, results=results)
    dropped = 0
    if not accepts_data_blocks:
        message, dropped = filter_message_data_blocks(item)
    calls = message.tool_calls if message.role is Role.ASSISTANT else ()
    return ItemForm(
        message=message,
        size=json_size(message),
        provenance=provenance,
        calls=calls,
        call_ids=frozenset(c.id for c in calls),
        dropped_data_blocks=dropped,
        is_system=message.role is Role.SYSTEM,
    )


def item_forms(
    items: Iterable[ConversationItem],
    *,
    watermark: int | None,
    spill_dir: str | None,
    accepts_data_blocks: bool,
) -> list[ItemForm]:
    """The form of every item, from ``item._memo`` when already computed."""
    plain_key = memo_key(pruned=False, spill_dir=spill_dir, accepts_data_blocks=accepts_data_blocks)
    pruned_key = memo_key(pruned=True, spill_dir=spill_dir, accepts_data_blocks=accepts_data_blocks)
    tool = Role.TOOL
    forms: list[ItemForm] = []
    append = forms.append
    for item in items:
        origin = item.origin
        prune = (
            watermark is not None
            and item.message.role is tool
            and isinstance(origin, RealOrigin)
            and origin.sequence <= watermark
        )
        key = pruned_key if prune else plain_key
        memo = item._memo
        form = memo.get(key)
        if not isinstance(form, ItemForm):
            form = compute_item_form(
                item, prune=prune, spill_dir=spill_dir, accepts_data_blocks=accepts_data_blocks
            )
            memo[key] = form
        append(form)
    return forms
