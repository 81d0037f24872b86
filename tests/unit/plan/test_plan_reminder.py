"""The ``## Current plan`` reminder section (update-plan.md §6, compaction.md §4)."""

from __future__ import annotations

from openwork_core.plan.model import PlanStep, PlanStepStatus
from openwork_core.plan.reminder import escape_reminder_text, render_plan_section


def _steps(*items: tuple[str, PlanStepStatus]) -> tuple[PlanStep, ...]:
    return tuple(PlanStep(step=s, status=st) for s, st in items)


def test_a_plan_renders_the_heading_explanation_and_one_line_per_step_in_order() -> None:
    """update-plan.md §6: the example of the spec, byte for byte."""
    steps = _steps(
        ("read schema", PlanStepStatus.COMPLETED),
        ("add migration", PlanStepStatus.IN_PROGRESS),
        ("wire runner", PlanStepStatus.PENDING),
    )
    assert render_plan_section("storage first", steps) == (
        "## Current plan\n"
        "storage first\n"
        "- [completed] read schema\n"
        "- [in_progress] add migration\n"
        "- [pending] wire runner"
    )


def test_a_blank_or_missing_explanation_renders_no_line() -> None:
    """update-plan.md §6: ``<explanation, if not blank>``."""
    steps = _steps(("a", PlanStepStatus.PENDING))
    expected = "## Current plan\n- [pending] a"
    assert render_plan_section(None, steps) == expected
    assert render_plan_section("  \n ", steps) == expected


def test_an_empty_plan_renders_nothing() -> None:
    """update-plan.md §6: empty plan -> render nothing (clearing removes it)."""
    assert render_plan_section("cleared", ()) == ""


def test_step_and_explanation_text_is_escaped_like_the_reminder() -> None:
    """update-plan.md §6, compaction.md §4: & < > entities, newline -> ``\\n``."""
    steps = _steps(("fix <a> & <b>\nthen test", PlanStepStatus.PENDING))
    assert render_plan_section("x > y", steps) == (
        "## Current plan\nx &gt; y\n- [pending] fix &lt;a&gt; &amp; &lt;b&gt;\\nthen test"
    )


def test_other_control_characters_become_the_replacement_character() -> None:
    """compaction.md §4: other control chars become U+FFFD."""
    assert escape_reminder_text("a\tb\rc\x00d") == "a\ufffdb\ufffdc\ufffdd"
    assert escape_reminder_text("ünï – 界") == "ünï – 界"
