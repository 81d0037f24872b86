"""Per section: its opening tag and its two notices, and how a stored message is recognised (§3)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from types import MappingProxyType

from openwork_core.context.world_state.ids import SECTION_ORDER, SectionId
from openwork_core.context.world_state.project_instructions import (
    PROJECT_INSTRUCTIONS_INVALIDATION_NOTICE,
    PROJECT_INSTRUCTIONS_REPLACEMENT_NOTICE,
    PROJECT_INSTRUCTIONS_TAG,
)
from openwork_core.context.world_state.sandbox_policy import (
    SANDBOX_POLICY_INVALIDATION_NOTICE,
    SANDBOX_POLICY_REPLACEMENT_NOTICE,
    SANDBOX_POLICY_TAG,
)
from openwork_core.context.world_state.skill_catalog import (
    SKILL_CATALOG_INVALIDATION_NOTICE,
    SKILL_CATALOG_REPLACEMENT_NOTICE,
    SKILL_CATALOG_TAG,
)
from openwork_core.context.world_state.user_project import (
    USER_PROJECT_CONTEXT_INVALIDATION_NOTICE,
    USER_PROJECT_CONTEXT_REPLACEMENT_NOTICE,
    USER_PROJECT_CONTEXT_TAG,
)


class MessageForm(enum.Enum):
    """What a World State message of a section carries."""

    BODY = "body"  # the body, with or without the replacement notice
    INVALIDATION = "invalidation"


@dataclass(frozen=True, slots=True)
class SectionSpec:
    section_id: SectionId
    tag: str
    replacement_notice: str
    invalidation_notice: str

    def replacement(self, body: str) -> str:
        """Replacement notice, blank line, full body."""
        return f"{self.replacement_notice}\n\n{body}"

    def recognise(self, text: str) -> MessageForm | None:
        """The form of ``text`` if it is a message of this section: it starts with the opening
        tag, or with the replacement notice + blank line + tag, or it equals the invalidation
        notice."""
        if text.startswith(self.tag) or text.startswith(self.replacement(self.tag)):
            return MessageForm.BODY
        if text == self.invalidation_notice:
            return MessageForm.INVALIDATION
        return None


SECTION_SPECS: MappingProxyType[SectionId, SectionSpec] = MappingProxyType(
    {
        SectionId.USER_PROJECT_CONTEXT: SectionSpec(
            SectionId.USER_PROJECT_CONTEXT,
            USER_PROJECT_CONTEXT_TAG,
            USER_PROJECT_CONTEXT_REPLACEMENT_NOTICE,
            USER_PROJECT_CONTEXT_INVALIDATION_NOTICE,
        ),
        SectionId.PROJECT_INSTRUCTIONS: SectionSpec(
            SectionId.PROJECT_INSTRUCTIONS,
            PROJECT_INSTRUCTIONS_TAG,
            PROJECT_INSTRUCTIONS_REPLACEMENT_NOTICE,
            PROJECT_INSTRUCTIONS_INVALIDATION_NOTICE,
        ),
        SectionId.SKILL_CATALOG: SectionSpec(
            SectionId.SKILL_CATALOG,
            SKILL_CATALOG_TAG,
            SKILL_CATALOG_REPLACEMENT_NOTICE,
            SKILL_CATALOG_INVALIDATION_NOTICE,
        ),
        SectionId.SANDBOX_POLICY: SectionSpec(
            SectionId.SANDBOX_POLICY,
            SANDBOX_POLICY_TAG,
            SANDBOX_POLICY_REPLACEMENT_NOTICE,
            SANDBOX_POLICY_INVALIDATION_NOTICE,
        ),
    }
)
assert tuple(SECTION_SPECS) == SECTION_ORDER


def recognise_message(text: str) -> tuple[SectionId, MessageForm] | None:
    """The section and form of a World State message's text, or ``None``."""
    for spec in SECTION_SPECS.values():
        form = spec.recognise(text)
        if form is not None:
            return spec.section_id, form
    return None
