"""Section ids, their fixed order, and World State message ids (context-window.md §3)."""

from __future__ import annotations

import enum

from openwork_core.ids import MessageId, TurnId


class SectionId(enum.StrEnum):
    USER_PROJECT_CONTEXT = "runtime/user-project-context"
    PROJECT_INSTRUCTIONS = "project/AGENTS.md"
    SKILL_CATALOG = "skills/catalog"
    SANDBOX_POLICY = "runtime/sandbox-policy"


SECTION_ORDER: tuple[SectionId, ...] = (
    SectionId.USER_PROJECT_CONTEXT,
    SectionId.PROJECT_INSTRUCTIONS,
    SectionId.SKILL_CATALOG,
    SectionId.SANDBOX_POLICY,
)
"""Project context, ``AGENTS.md``, skill catalog, sandbox policy: the order never changes."""


def world_state_message_id(
    turn_id: TurnId, model_call: int, sample_seq: int, section_id: str
) -> MessageId:
    """``world-state:<turn>:<model call>:<sample seq>:<section>``; the same sampling always yields
    the same id, so a repeated write is idempotent."""
    return MessageId(f"world-state:{turn_id}:{model_call}:{sample_seq}:{section_id}")
