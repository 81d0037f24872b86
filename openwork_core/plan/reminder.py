"""The ``## Current plan`` section of the compaction reminder (update-plan.md §6, compaction.md §4).

Pure: the compaction code calls ``render_plan_section`` with the plan it carries in
``extensions["turn_plan"]`` and places the text after ``## Edited paths``."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from openwork_core.plan.model import PlanStep

TURN_PLAN_EXTENSION_KEY = "turn_plan"
TURN_PLAN_EXTENSION_SCHEMA_VERSION = 1
CURRENT_PLAN_HEADING = "## Current plan"
REPLACEMENT_CHARACTER = "\ufffd"

_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\n": "\\n"}


def escape_reminder_text(text: str) -> str:
    """``&``, ``<``, ``>`` as entities, a newline as the two characters ``\\n``, any other
    control character as U+FFFD (compaction.md §4)."""
    out: list[str] = []
    for char in text:
        replacement = _ENTITIES.get(char)
        if replacement is not None:
            out.append(replacement)
        elif unicodedata.category(char) == "Cc":
            out.append(REPLACEMENT_CHARACTER)
        else:
            out.append(char)
    return "".join(out)


def render_plan_section(explanation: str | None, steps: Sequence[PlanStep]) -> str:
    """The section's lines joined by newlines; ``""`` for an empty plan (render nothing).

    The explanation line appears only when it is not blank; steps keep submission order."""
    if not steps:
        return ""
    lines = [CURRENT_PLAN_HEADING]
    if explanation is not None and explanation.strip():
        lines.append(escape_reminder_text(explanation))
    lines.extend(f"- [{s.status.value}] {escape_reminder_text(s.step)}" for s in steps)
    return "\n".join(lines)
