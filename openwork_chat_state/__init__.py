"""Chat State: the single writer of the model-visible Conversation."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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

_EXPORTS = {
    "ChatStateActor": "openwork_chat_state.actor",
    "ChatStateError": "openwork_chat_state.errors",
    "ChatStateHandle": "openwork_chat_state.actor",
    "ChatStateStopped": "openwork_chat_state.errors",
    "ConversationContextView": "openwork_chat_state.view",
    "ConversationItem": "openwork_chat_state.item",
    "ConversationState": "openwork_chat_state.state",
    "Draft": "openwork_chat_state.state",
    "DuplicateToolCall": "openwork_chat_state.errors",
    "ItemOrigin": "openwork_chat_state.item",
    "MessageKind": "openwork_chat_state.item",
    "NoActiveDraft": "openwork_chat_state.errors",
    "PersistedSystemMessage": "openwork_chat_state.errors",
    "RealOrigin": "openwork_chat_state.item",
    "SyntheticOrigin": "openwork_chat_state.item",
    "SyntheticReason": "openwork_chat_state.item",
    "SystemMessageRejected": "openwork_chat_state.errors",
    "UnmatchedToolResult": "openwork_chat_state.errors",
}
"""Each public name's module: nothing is imported until a name is used."""

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

if not TYPE_CHECKING:  # for mypy the names are the imports above: a misspelt one is an error

    def __getattr__(name: str) -> object:
        """A public name, imported from its module on first use (PEP 562) and kept."""
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
