"""The frozen runtime reminder (compaction.md §4, update-plan.md §6)."""

from __future__ import annotations

import pytest

from openwork_core.plan.reminder import escape_reminder_text
from openwork_core.session.compaction.errors import ReminderInvalid
from openwork_core.session.compaction.reminder import (
    EMPTY_REMINDER,
    render_reminder,
    validate_reminder,
)
from openwork_core.session.compaction.runtime_state import (
    CompactionRuntimeState,
    collect_runtime_state,
)
from tests.unit.compaction.compaction_support import turn_plan

PLAN = turn_plan(
    ("read schema", "completed"),
    ("add migration", "in_progress"),
    ("wire runner", "pending"),
    explanation="schema first",
)


def test_an_empty_state_renders_the_fixed_empty_body() -> None:
    """§4 and storage.md §2: the column default is exactly this text."""
    expected = (
        '<system_reminder format_version="1">\n'
        "No additional durable runtime state was recorded at compaction time.\n"
        "</system_reminder>"
    )
    assert render_reminder(CompactionRuntimeState()) == expected == EMPTY_REMINDER


def test_reminder_bytes_are_stable_with_edited_paths_before_the_plan() -> None:
    """§10: contributor/path order and reminder bytes stable."""
    state = CompactionRuntimeState(edited_paths=("/w/a.py", "/w/b<c>.py"))
    state = collect_runtime_state(state, [], PLAN)
    state = CompactionRuntimeState(
        edited_paths=("/w/a.py", "/w/b<c>.py"), extensions=state.extensions
    )
    expected = (
        '<system_reminder format_version="1">\n'
        "## Edited paths\n"
        "- /w/a.py\n"
        "- /w/b&lt;c&gt;.py\n"
        "## Current plan\n"
        "schema first\n"
        "- [completed] read schema\n"
        "- [in_progress] add migration\n"
        "- [pending] wire runner\n"
        "</system_reminder>"
    )
    assert render_reminder(state) == expected
    assert render_reminder(state) == render_reminder(
        CompactionRuntimeState.from_json(state.to_json())
    )


def test_an_empty_plan_renders_nothing_and_a_blank_explanation_is_left_out() -> None:
    empty = collect_runtime_state(None, [], turn_plan(explanation="x"))
    assert render_reminder(empty) == EMPTY_REMINDER
    blank = turn_plan(("read schema", "completed"), explanation="  ")
    assert render_reminder(collect_runtime_state(None, [], blank)).splitlines()[1:3] == [
        "## Current plan",
        "- [completed] read schema",
    ]


def test_escaping_uses_entities_a_literal_backslash_n_and_the_replacement_character() -> None:
    assert escape_reminder_text("a & b <c>\nd\te\x00") == "a &amp; b &lt;c&gt;\\nd\ufffde\ufffd"


def test_a_reminder_over_32768_characters_fails_the_compaction() -> None:
    """update-plan.md §6: a valid plan can exceed the cap (known gap) → compaction fails."""
    steps = [("s" * 1_024, "pending")] * 128
    state = collect_runtime_state(None, [], turn_plan(*steps))
    with pytest.raises(ReminderInvalid, match="32768"):
        render_reminder(state)


@pytest.mark.parametrize(
    "text",
    [
        "no root",
        '<system_reminder format_version="1">\n\n</system_reminder>',
        '<system_reminder format_version="1">\n<system_reminder format_version="1">\n</system_reminder>',
    ],
)
def test_a_reminder_must_be_exactly_one_root_with_a_non_empty_body(text: str) -> None:
    with pytest.raises(ReminderInvalid):
        validate_reminder(text)
