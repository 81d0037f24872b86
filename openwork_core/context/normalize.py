"""Normalization of the request copy (context-window.md §4.2, §10 invariant 9): the rules, the
per-item form types and the data-block filters; the pass that applies the pairing as it builds
each item's form is ``item_forms.normalized_conversation``.

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
