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
from openwork_chat_state.messages import Message, Role, ToolCallBlock, ToolResultBlock
from openwork_core.context.normalize import (
    ItemForm,
    ResultForm,
    filter_message_data_blocks,
    strip_result_data_blocks,
)
from openwork_core.context.projection import is_over_limit, tool_message, truncate_tool_result
from openwork_core.context.prune import prune_tool_result
from openwork_core.context.wire import json_size

_MEMO_PREFIX = "openwork_core.context.form"
_NO_IDS: frozenset[str] = frozenset()


def memo_key(*, pruned: bool, spill_dir: str | None, accepts_data_blocks: bool) -> str:
    return f"{_MEMO_PREFIX}:{int(pruned)}:{int(accepts_data_blocks)}:{spill_dir!r}"


def result_form(
    result: ToolResultBlock,
    prune: bool,
    spill_dir: str | None,
    accepts_data_blocks: bool,
    message: Message | None = None,
) -> ResultForm:
    """Prune → project → strip data blocks, for one result. ``message`` is the stored tool
    message when it holds just this result: it is then the request form itself (no copy)."""
    pruned_result = prune_tool_result(result, spill_dir) if prune else None
    current = pruned_result or result
    if pruned_result is not None or message is None:
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
    return ResultForm(result.id, message, size, pruned_result is not None, truncated, dropped)


def compute_item_form(
    item: ConversationItem, *, prune: bool, spill_dir: str | None, accepts_data_blocks: bool
) -> ItemForm:
    """One pass over the item: each message or result of its request form is built once and
    measured with one ``orjson.dumps``; nothing else is serialized or copied."""
    message = item.message
    role = message.role
    if role is Role.TOOL:
        content = message.content
        if len(content) == 1:  # the usual tool message: one result, its own request form
            only = content[0]
            results: tuple[ResultForm, ...] = (
                (result_form(only, prune, spill_dir, accepts_data_blocks, message),)
                if type(only) is ToolResultBlock
                else ()
            )
        else:
            results = tuple(
                [
                    result_form(b, prune, spill_dir, accepts_data_blocks)
                    for b in content
                    if type(b) is ToolResultBlock
                ]
            )
        return ItemForm(message, 0, item, (), _NO_IDS, results, 0, False)
    dropped = 0
    if not accepts_data_blocks:
        message, dropped = filter_message_data_blocks(item)
    if role is Role.ASSISTANT:
        calls = [b for b in message.content if type(b) is ToolCallBlock]
        if calls:
            return ItemForm(
                message,
                json_size(message),
                item,
                tuple(calls),
                frozenset([c.id for c in calls]),
                None,
                dropped,
                False,
            )
    return ItemForm(
        message, json_size(message), item, (), _NO_IDS, None, dropped, role is Role.SYSTEM
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
    tool, assistant, system = Role.TOOL, Role.ASSISTANT, Role.SYSTEM
    forms: list[ItemForm] = []
    append = forms.append
    for item in items:
        message = item.message
        role = message.role
        key = plain_key
        if role is tool and watermark is not None:
            origin = item.origin
            if type(origin) is RealOrigin and origin.sequence <= watermark:
                key = pruned_key
        memo = item._memo
        form = memo.get(key)
        if type(form) is not ItemForm:
            if accepts_data_blocks and role is not tool and role is not assistant:
                # the common case inline: the stored message is its own request form
                form = ItemForm(
                    message, json_size(message), item, (), _NO_IDS, None, 0, role is system
                )
            else:
                form = compute_item_form(
                    item,
                    prune=key is pruned_key,
                    spill_dir=spill_dir,
                    accepts_data_blocks=accepts_data_blocks,
                )
            memo[key] = form
        append(form)
    return forms
