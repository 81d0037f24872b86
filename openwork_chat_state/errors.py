"""Chat State errors, each with a stable code."""

from __future__ import annotations

from typing import ClassVar

from openwork_chat_state.error_root import OpenWorkError


class ChatStateError(OpenWorkError):
    code: ClassVar[str] = "chat_state_error"


class PersistedSystemMessage(ChatStateError):
    """A System message was found while loading the Conversation (§4.1)."""

    code = "persisted_system_message"


class SystemMessageRejected(ChatStateError):
    """A System message was offered for appending; the Conversation never holds one (§4.1)."""

    code = "system_message_rejected"


class UnmatchedToolResult(ChatStateError):
    """A Tool Result whose Tool Call is unknown or already answered (§4.1)."""

    code = "unmatched_tool_result"


class DuplicateToolCall(ChatStateError):
    """The same Tool Call id appears twice (§4.1)."""

    code = "duplicate_tool_call"


class NoActiveDraft(ChatStateError):
    code = "no_active_draft"


class ChatStateStopped(ChatStateError):
    code = "chat_state_stopped"
