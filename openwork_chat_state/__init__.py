"""Chat State: the single writer of the model-visible Conversation."""

from __future__ import annotations

from openwork_chat_state.actor import ChatStateActor, ChatStateHandle
from openwork_chat_state.errors import (
    ChatStateError,
    ChatStateStopped,
    DuplicateToolCall,
    NoActiveDraft,
    PersistedSystemMessage,
    SystemMessageRejected,
    UnmatchedToolResult,
)
from openwork_chat_state.item import (
    ConversationItem,
    ItemOrigin,
    MessageKind,
    RealOrigin,
    SyntheticOrigin,
    SyntheticReason,
)
from openwork_chat_state.state import ConversationState, Draft
from openwork_chat_state.view import ConversationContextView

__all__ = [
    "ChatStateActor",
    "ChatStateError",
    "ChatStateHandle",
    "ChatStateStopped",
    "ConversationContextView",
    "ConversationItem",
    "ConversationState",
    "Draft",
    "DuplicateToolCall",
    "ItemOrigin",
    "MessageKind",
    "NoActiveDraft",
    "PersistedSystemMessage",
    "RealOrigin",
    "SyntheticOrigin",
    "SyntheticReason",
    "SystemMessageRejected",
    "UnmatchedToolResult",
]
