"""The frozen runtime reminder (compaction.md §4, update-plan.md §6).

::

    <system_reminder format_version="1">
    ## Edited paths
    - <path>
    ## Current plan
    <explanation, if not blank>
    - [<status>] <step>
    </system_reminder>

Sections follow their contributors' key order (``file_changes``, then ``turn_plan``); a section
with nothing to say is left out; with no section the body is the fixed empty-body sentence.
Headings and lines escape ``&``, ``<``, ``>`` as entities, a newline becomes the two characters
``\\n`` and every other control character becomes U+FFFD. At most 32 768 characters, exactly one
root, a non-empty body; a reminder breaking these fails the compaction.
"""

from __future__ import annotations

from openwork_core.plan.reminder import escape_reminder_text, render_plan_section
from openwork_core.session.compaction.errors import ReminderInvalid
from openwork_core.session.compaction.runtime_state import CompactionRuntimeState

REMINDER_ROOT_OPEN = '<system_reminder format_version="1">'
REMINDER_ROOT_CLOSE = "</system_reminder>"
EMPTY_REMINDER_BODY = "No additional durable runtime state was recorded at compaction time."
REMINDER_MAX_CHARS = 32_768
EDITED_PATHS_HEADING = "## Edited paths"


def _edited_paths_section(state: CompactionRuntimeState) -> list[str]:
    if not state.edited_paths:
        return []
    return [EDITED_PATHS_HEADING, *(f"- {escape_reminder_text(p)}" for p in state.edited_paths)]


def _plan_section(state: CompactionRuntimeState) -> list[str]:
    """``## Current plan`` rendered by the plan package (update-plan.md §6)."""
    plan = state.turn_plan()
    if plan is None:
        return []
    section = render_plan_section(plan.explanation, plan.steps)
    return section.split("\n") if section else []


def render_reminder(state: CompactionRuntimeState) -> str:
    """The reminder text for ``state``; ``ReminderInvalid`` when it breaks a §4 rule."""
    body = _edited_paths_section(state) + _plan_section(state)
    if not body:
        body = [EMPTY_REMINDER_BODY]
    return validate_reminder("\n".join([REMINDER_ROOT_OPEN, *body, REMINDER_ROOT_CLOSE]))


EMPTY_REMINDER = "\n".join([REMINDER_ROOT_OPEN, EMPTY_REMINDER_BODY, REMINDER_ROOT_CLOSE])
"""The reminder of a state with nothing to render (also the column default, storage.md §2)."""


def validate_reminder(text: str) -> str:
    if len(text) > REMINDER_MAX_CHARS:
        raise ReminderInvalid(
            f"the runtime reminder has {len(text)} characters, more than {REMINDER_MAX_CHARS}"
        )
    if not (
        text.startswith(REMINDER_ROOT_OPEN + "\n") and text.endswith("\n" + REMINDER_ROOT_CLOSE)
    ):
        raise ReminderInvalid("the runtime reminder is not one root block")
    if text.count("<system_reminder") != 1 or text.count(REMINDER_ROOT_CLOSE) != 1:
        raise ReminderInvalid("the runtime reminder has more than one root")
    body = text[len(REMINDER_ROOT_OPEN) + 1 : -len(REMINDER_ROOT_CLOSE) - 1]
    if not body.strip():
        raise ReminderInvalid("the runtime reminder body is empty")
    return text
