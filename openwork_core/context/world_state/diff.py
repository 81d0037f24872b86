"""The pure half of sampling: which sections are still in the Conversation, and what to send (§3).

``render_diff`` implements the notice table of context-window.md §3. The baseline is what this
process last advanced to (empty after a restart); "still in the Conversation" comes from
``RetainedSections.scan``. Under DESIGN.md §2 a section is retained only when its latest World State
message carries a body, so whether a notice is attached depends only on the retained bit, except
that an unchanged body under a known baseline sends nothing:

================  ========  ==========================  ====================
baseline          retained  section has a body          section is absent
================  ========  ==========================  ====================
same body         yes       nothing                     —
other / unknown   yes       replacement notice + body   invalidation notice
any               no        body without a notice       nothing
================  ========  ==========================  ====================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openwork_chat_state.item import ConversationItem, MessageKind
from openwork_core.context.world_state.capture import WorldStateCapture
from openwork_core.context.world_state.ids import SECTION_ORDER, SectionId
from openwork_core.context.world_state.sections import (
    SECTION_SPECS,
    MessageForm,
    recognise_message,
)


@dataclass(frozen=True, slots=True)
class RetainedSections:
    """The sections whose latest World State message in the Conversation carries a body."""

    sections: frozenset[SectionId] = frozenset()

    @classmethod
    def scan(cls, items: Sequence[ConversationItem]) -> RetainedSections:
        """Look only at ``world_state`` items; a user message with the same text never counts."""
        latest: dict[SectionId, MessageForm] = {}
        for item in items:
            if item.kind is not MessageKind.WORLD_STATE:
                continue
            recognised = recognise_message(item.message.text)
            if recognised is not None:
                section_id, form = recognised
                latest[section_id] = form
        return cls(frozenset(s for s, form in latest.items() if form is MessageForm.BODY))

    def __contains__(self, section_id: object) -> bool:
        return section_id in self.sections


@dataclass(frozen=True, slots=True)
class WorldStateBaseline:
    """What this process last told the model; ``capture is None`` = nothing yet (a restart)."""

    capture: WorldStateCapture | None = None

    @classmethod
    def empty(cls) -> WorldStateBaseline:
        return cls()

    def advanced(self, capture: WorldStateCapture) -> WorldStateBaseline:
        """The baseline after every message of a sampling was persisted and appended."""
        return WorldStateBaseline(capture)

    def knows(self, section_id: SectionId, body: str | None) -> bool:
        """True when the baseline holds exactly this body for the section."""
        return self.capture is not None and self.capture.body(section_id) == body


@dataclass(frozen=True, slots=True)
class WorldStateUpdate:
    """One message to append: role user, kind ``world_state``, this text."""

    section_id: SectionId
    text: str


def render_section(
    section_id: SectionId, baseline: WorldStateBaseline, body: str | None, retained: bool
) -> str | None:
    """The text to send for one section, or ``None`` for nothing (the table above)."""
    spec = SECTION_SPECS[section_id]
    if not retained:
        return body
    if body is None:
        return spec.invalidation_notice
    if baseline.knows(section_id, body):
        return None
    return spec.replacement(body)


def render_diff(
    baseline: WorldStateBaseline, capture: WorldStateCapture, retained: RetainedSections
) -> tuple[WorldStateUpdate, ...]:
    """The messages of one sampling, in the fixed section order. Read-only."""
    updates: list[WorldStateUpdate] = []
    for section_id in SECTION_ORDER:
        body = capture.body(section_id)
        text = render_section(section_id, baseline, body, section_id in retained)
        if text is not None:
            updates.append(WorldStateUpdate(section_id, text))
    return tuple(updates)
