"""The read-only view of the Conversation handed to the context engine for one model call."""

from __future__ import annotations

from dataclasses import dataclass

from openwork_chat_state.item import ConversationItem


@dataclass(frozen=True, slots=True)
class ConversationContextView:
    """The committed items (never the draft) and the pruning watermark (§4.1)."""

    items: tuple[ConversationItem, ...]
    tool_result_pruned_through_sequence: int | None = None
