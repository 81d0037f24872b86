"""Context assembly errors, each with a stable snake_case code (context-window.md §6, §7.3).

One base, ``ContextAssemblyError``; every subclass names the code the runtime reports. A Turn whose
request cannot be assembled fails before the model is called.
"""

from __future__ import annotations

from typing import ClassVar

from openwork_chat_state.error_root import OpenWorkError


class ContextAssemblyError(OpenWorkError):
    """The request copy for one Model Call could not be assembled."""

    code: ClassVar[str] = "context_assembly_error"


class SystemContextInvalid(ContextAssemblyError):
    """A System Context part has a blank or duplicated key, blank content, or is estimated at
    10 000 tokens or more (§2, §6, §7.3)."""

    code = "system_context_invalid"


class SystemMessageInConversation(ContextAssemblyError):
    """The Conversation holds a System message (§6 step 3, §10 invariant 2)."""

    code = "system_message_in_conversation"


class DataBlockInUserInput(ContextAssemblyError):
    """The model accepts no data blocks and real user input carries one (§4.2)."""

    code = "data_block_in_user_input"


class SkillTooLarge(ContextAssemblyError):
    """An explicitly selected Skill body is estimated at 8 000 tokens or more (§7.3): the Turn is
    refused, the body is never trimmed."""

    code = "skill_too_large"
    http_status = 422


class AgentMessageTooLarge(ContextAssemblyError):
    """A sub-Agent message is estimated at 4 000 tokens or more (§7.3): delivery fails."""

    code = "agent_delivery_failed"
