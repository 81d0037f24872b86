"""Per-item limits on author-controlled items (context-window.md §7.3).

An item over its limit is rejected, never trimmed. The estimate of a text item is ⌈bytes of the
compact JSON of its ``Message`` / 4⌉ — the same metric as the budget — and an item must be strictly
under its limit:

| item | limit | error (code) |
| --- | --- | --- |
| System Context part | 10 000 tokens | ``SystemContextInvalid`` (``system_context_invalid``) |
| Skill body | 8 000 tokens | ``SkillTooLarge`` (``skill_too_large``) |
| Agent Message | 4 000 tokens | ``AgentMessageTooLarge`` (``agent_delivery_failed``) |

Tool Results are not in this table: the per-item projection truncates them (``projection``).
"""

from __future__ import annotations

from openwork_chat_state.messages import Message, Role, TextBlock
from openwork_core.context.builder import SystemContextPart
from openwork_core.context.errors import (
    AgentMessageTooLarge,
    SkillTooLarge,
    SystemContextInvalid,
)
from openwork_core.context.wire import json_size, tokens_for_bytes

SYSTEM_CONTEXT_PART_TOKEN_LIMIT = 10_000
SKILL_BODY_TOKEN_LIMIT = 8_000
AGENT_MESSAGE_TOKEN_LIMIT = 4_000


def estimate_text_item_tokens(text: str, role: Role = Role.USER) -> int:
    """⌈compact JSON bytes of ``Message(role, (TextBlock(text),))`` / 4⌉."""
    return tokens_for_bytes(json_size(Message(role=role, content=(TextBlock(text=text),))))


def check_system_context_part(part: SystemContextPart) -> int:
    """Return the part's estimate; raise ``SystemContextInvalid`` at 10 000 tokens or more."""
    tokens = estimate_text_item_tokens(part.content, Role.SYSTEM)
    if tokens >= SYSTEM_CONTEXT_PART_TOKEN_LIMIT:
        raise SystemContextInvalid(
            f"system context part {part.key!r} is estimated at {tokens} tokens; "
            f"it must be under {SYSTEM_CONTEXT_PART_TOKEN_LIMIT}"
        )
    return tokens


def check_skill_body(skill_name: str, body: str) -> int:
    """Return the body's estimate; raise ``SkillTooLarge`` at 8 000 tokens or more."""
    tokens = estimate_text_item_tokens(body)
    if tokens >= SKILL_BODY_TOKEN_LIMIT:
        raise SkillTooLarge(
            f"skill {skill_name!r} is estimated at {tokens} tokens; "
            f"it must be under {SKILL_BODY_TOKEN_LIMIT}"
        )
    return tokens


def check_agent_message(text: str) -> int:
    """Return the message's estimate; raise ``AgentMessageTooLarge`` at 4 000 tokens or more."""
    tokens = estimate_text_item_tokens(text)
    if tokens >= AGENT_MESSAGE_TOKEN_LIMIT:
        raise AgentMessageTooLarge(
            f"agent message is estimated at {tokens} tokens; "
            f"it must be under {AGENT_MESSAGE_TOKEN_LIMIT}"
        )
    return tokens
