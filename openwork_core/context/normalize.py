"""Normalization of the request copy (context-window.md §4.2, §10 invariant 9).

Pairing, over the per-item forms in Conversation order:

- the Tool Results that count for an Assistant message are the tool messages directly after it
  (up to the next non-tool message); they are emitted right after it, in the order of its Tool
  Calls, one per call;
- a result in that run whose call is not declared by that Assistant message, or whose call was
  already answered, is dropped, as is every tool message anywhere else (misplaced, duplicated or
  orphan results); each dropped result is counted;
- a call with no result gets a synthesized ``interrupted`` result with the call's id and name and
  the fixed body ``INTERRUPTED_RESULT_TEXT``; the bytes depend only on the call, so the same
  history always yields the same bytes.

Data blocks, when the model accepts none: real user input (role user, kind ``normal``) carrying one
fails with ``DataBlockInUserInput``; in every other message (Skill bodies, Agent Messages, World
State, assistant messages) and in Tool Results they are removed and counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from openwork_chat_state.item import ConversationItem, MessageKind
from openwork_chat_state.messages import (
    ContentBlock,
    DataBlock,
    Message,
    Role,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
)
from openwork_core.context.errors import DataBlockInUserInput
from openwork_core.context.projection import tool_message
from openwork_core.context.wire import json_size

INTERRUPTED_RESULT_TEXT = (
    "Tool result unavailable: the previous turn ended before a durable result was recorded."
)


@dataclass(frozen=True, slots=True)
class ProjectionSummary:
    """What the request copy changed. Field order is the inspection's wire shape."""

    pruned: int = 0
    truncated: int = 0
    synthesized_results: int = 0
    dropped_results: int = 0
    dropped_data_blocks: int = 0


class ResultForm(NamedTuple):
    """One Tool Result as it would be sent: its own tool message and that message's JSON size.
    (Named tuples, like ``ItemForm``: a cold prepare makes one per item, and a tuple is built
    several times faster than a frozen dataclass.)"""

    call_id: str
    message: Message
    size: int
    pruned: bool
    truncated: bool
    dropped_data_blocks: int


class ItemForm(NamedTuple):
    """One Conversation item after prune, projection and the data-block filter.

    ``results`` is set exactly for tool messages (whose ``message`` is then never emitted);
    ``calls`` holds an Assistant message's Tool Calls; ``source`` is the item itself (its
    provenance is derived from it only when asked for).
    """

    message: Message
    size: int
    source: ConversationItem
    calls: tuple[ToolCallBlock, ...]
    call_ids: frozenset[str]
    results: tuple[ResultForm, ...] | None
    dropped_data_blocks: int
    is_system: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class NormalizedConversation:
    messages: tuple[Message, ...]
    sources: tuple[ConversationItem | None, ...]
    """The item each message came from (``None``: a synthesized result)."""
    sizes: tuple[int, ...]
    """Each message's JSON size (``sizes[i]`` belongs to ``messages[i]``)."""
    sizes_total: int
    has_system_message: bool
    summary: ProjectionSummary


def synthesize_interrupted_result(call: ToolCallBlock) -> Message:
    """The fixed ``interrupted`` result for a call that has none."""
    return tool_message(
        ToolResultBlock(
            id=call.id,
            name=call.name,
            output=(TextBlock(text=INTERRUPTED_RESULT_TEXT),),
            state=ToolResultState.INTERRUPTED,
        )
    )


def strip_result_data_blocks(result: ToolResultBlock) -> tuple[ToolResultBlock, int]:
    kept = tuple(b for b in result.output if not isinstance(b, DataBlock))
    removed = len(result.output) - len(kept)
    if not removed:
        return result, 0
    stripped = ToolResultBlock(id=result.id, name=result.name, output=kept, state=result.state)
    return stripped, removed


def filter_message_data_blocks(item: ConversationItem) -> tuple[Message, int]:
    """For a model without data blocks: fail on real user input, otherwise drop and count them."""
    message = item.message
    if not any(isinstance(b, DataBlock) for b in message.content):
        return message, 0
    if message.role is Role.USER and item.kind is MessageKind.NORMAL:
        raise DataBlockInUserInput(
            f"message {item.message_id!r} carries a data block and the model accepts none"
        )
    kept: tuple[ContentBlock, ...] = tuple(
        b for b in message.content if not isinstance(b, DataBlock)
    )
    return Message(role=message.role, content=kept), len(message.content) - len(kept)


def normalize(forms: Iterable[ItemForm]) -> NormalizedConversation:
    """Pair calls with results (see the module docstring) in one pass over ``forms``."""
    messages: list[Message] = []
    sources: list[ConversationItem | None] = []
    sizes: list[int] = []
    pruned = truncated = synthesized = dropped = dropped_data = 0
    has_system = False
    open_calls: tuple[ToolCallBlock, ...] = ()
    open_ids: frozenset[str] = frozenset()
    answers: dict[str, tuple[ResultForm, ConversationItem]] = {}

    def flush() -> None:
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

    for form in forms:
        results = form.results
        if results is not None:
            for result in results:
                if result.call_id in open_ids and result.call_id not in answers:
                    answers[result.call_id] = (result, form.source)
                else:
                    dropped += 1
            continue
        if open_calls:
            flush()
        messages.append(form.message)
        sources.append(form.source)
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
