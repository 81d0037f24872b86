"""The per-item part of the request copy, computed once per item and cached (DESIGN.md §6).

For each Conversation item, in order, the steps of context-window.md §4.2 that depend on that item
alone: prune (tool results at or below the watermark), per-item projection, and the data-block
filter of normalization. The result, an ``ItemForm`` holding the message(s) to send and their
compact-JSON sizes (for a plain message, just its size), is a pure function of the item and of
(pruned?, spill dir, accepts data blocks?), so it is memoized in ``item._memo`` under a key naming
those parameters. Items are immutable: a later request over the same items reuses every form and
serializes nothing again. ``normalized_conversation`` builds or reuses each form and pairs it
(``normalize``'s rules) in the same single pass.
"""

from __future__ import annotations

from collections.abc import Iterable

from openwork_chat_state.item import ConversationItem, RealOrigin
from openwork_chat_state.messages import Message, Role, ToolCallBlock, ToolResultBlock
from openwork_core.context.normalize import (
    ItemForm,
    NormalizedConversation,
    ProjectionSummary,
    ResultForm,
    filter_message_data_blocks,
    strip_result_data_blocks,
    synthesize_interrupted_result,
)
from openwork_core.context.projection import is_over_limit, tool_message, truncate_tool_result
from openwork_core.context.prune import prune_tool_result
from openwork_core.context.wire import json_size

_MEMO_PREFIX = "openwork_core.context.form"
_NO_IDS: frozenset[str] = frozenset()
_TOOL, _ASSISTANT, _SYSTEM = Role.TOOL, Role.ASSISTANT, Role.SYSTEM
"""Looked up once: an enum member read through its class costs more than the comparison."""


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
    if role is _TOOL:
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
    if role is _ASSISTANT:
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
    return ItemForm(message, json_size(message), item, (), _NO_IDS, None, dropped, role is _SYSTEM)


def normalized_conversation(
    items: Iterable[ConversationItem],
    *,
    watermark: int | None,
    spill_dir: str | None,
    accepts_data_blocks: bool,
) -> NormalizedConversation:
    """The request copy of ``items`` in one pass: each item's form (from ``item._memo`` when
    already computed), paired as it comes (see ``normalize``'s module docstring).

    A plain message — not a tool message nor an assistant message with tool calls, data blocks
    accepted — is its own request form: its memo entry is just its size, and nothing else is
    built for it."""
    plain_key = memo_key(pruned=False, spill_dir=spill_dir, accepts_data_blocks=accepts_data_blocks)
    pruned_key = memo_key(pruned=True, spill_dir=spill_dir, accepts_data_blocks=accepts_data_blocks)
    tool, assistant, system = _TOOL, _ASSISTANT, _SYSTEM
    messages: list[Message] = []
    sources: list[ConversationItem | None] = []
    sizes: list[int] = []
    pruned = truncated = synthesized = dropped = dropped_data = 0
    has_system = False
    open_calls: tuple[ToolCallBlock, ...] = ()
    open_ids: frozenset[str] = _NO_IDS
    answers: dict[str, tuple[ResultForm, ConversationItem]] = {}

    def flush() -> None:
        """Emit the results of the open Assistant message, one per call, in call order."""
        nonlocal pruned, truncated, synthesized, dropped_data
        for call in open_calls:
            answer = answers.pop(call.id, None)
            if answer is None:
                message = synthesize_interrupted_result(call)
                messages.append(message)
                sources.append(None)
                sizes.append(json_size(message))
                synthesized += 1
                continue
            result, origin = answer
            messages.append(result.message)
            sources.append(origin)
            sizes.append(result.size)
            pruned += result.pruned
            truncated += result.truncated
            dropped_data += result.dropped_data_blocks
        answers.clear()

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
        if type(form) is not int and type(form) is not ItemForm:
            if accepts_data_blocks and (
                role is not tool
                and (role is not assistant or ToolCallBlock not in map(type, message.content))
            ):
                form = json_size(message)
            else:
                form = compute_item_form(
                    item,
                    prune=key is pruned_key,
                    spill_dir=spill_dir,
                    accepts_data_blocks=accepts_data_blocks,
                )
            memo[key] = form
        if type(form) is int:  # a plain message
            if open_calls:
                flush()
                open_calls, open_ids = (), _NO_IDS
            messages.append(message)
            sources.append(item)
            sizes.append(form)
            if role is system:
                has_system = True
            continue
        assert isinstance(form, ItemForm)
        results = form.results
        if results is not None:
            for result in results:
                if result.call_id in open_ids and result.call_id not in answers:
                    answers[result.call_id] = (result, item)
                else:
                    dropped += 1
            continue
        if open_calls:
            flush()
        messages.append(form.message)
        sources.append(item)
        sizes.append(form.size)
        if form.dropped_data_blocks:
            dropped_data += form.dropped_data_blocks
        if form.is_system:
            has_system = True
        open_calls = form.calls
        open_ids = form.call_ids
    if open_calls:
        flush()
    return NormalizedConversation(
        messages=tuple(messages),
        sources=tuple(sources),
        sizes=tuple(sizes),
        sizes_total=sum(sizes),
        has_system_message=has_system,
        summary=ProjectionSummary(
            pruned=pruned,
            truncated=truncated,
            synthesized_results=synthesized,
            dropped_results=dropped,
            dropped_data_blocks=dropped_data,
        ),
    )
