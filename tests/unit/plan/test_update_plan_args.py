"""update_plan arguments and rules (update-plan.md §2, §3, §4)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import orjson
import pytest

from openwork_core.plan import errors as plan_errors
from openwork_core.plan.errors import PlanArgumentsUnparsable, PlanError, PlanRuleViolation
from openwork_core.plan.model import (
    MAX_PLAN_STEPS,
    MAX_STEP_CHARS,
    PlanStep,
    PlanStepStatus,
    TurnPlan,
    UpdatePlanArgs,
    steps_from_json,
    steps_to_json,
    unfinished_step_count,
)
from openwork_core.plan.tool import (
    PLAN_UPDATED_TEXT,
    UPDATE_PLAN_DESCRIPTION,
    parse_update_plan,
    read_update_plan,
    update_plan_definition,
    validate_plan,
)
from openwork_core.session.updates import PlanView

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def _args(*steps: tuple[str, str], explanation: str | None = None) -> str:
    body: dict[str, object] = {"plan": [{"step": s, "status": st} for s, st in steps]}
    if explanation is not None:
        body["explanation"] = explanation
    return orjson.dumps(body).decode()


def _rule_text(input_json: str) -> str:
    with pytest.raises(PlanRuleViolation) as caught:
        validate_plan(parse_update_plan(input_json))
    return str(caught.value)


def _parse_text(input_json: str) -> str:
    with pytest.raises(PlanArgumentsUnparsable) as caught:
        parse_update_plan(input_json)
    return str(caught.value)


# -- parsing -------------------------------------------------------------------------------


def test_every_status_round_trips_through_its_wire_spelling() -> None:
    """update-plan.md §2: pending | in_progress | completed everywhere."""
    args = parse_update_plan(_args(("a", "completed"), ("b", "in_progress"), ("c", "pending")))
    assert [s.status for s in args.plan] == [
        PlanStepStatus.COMPLETED,
        PlanStepStatus.IN_PROGRESS,
        PlanStepStatus.PENDING,
    ]
    assert steps_from_json(steps_to_json(args.plan)) == args.plan
    assert orjson.loads(steps_to_json(args.plan))[1] == {"step": "b", "status": "in_progress"}


def test_a_missing_plan_is_a_parse_error_with_the_fixed_prefix() -> None:
    """update-plan.md §2, §4: missing ``plan`` -> ``failed to parse update_plan arguments: …``."""
    assert _parse_text('{"explanation":"x"}') == (
        "failed to parse update_plan arguments: plan: Field required"
    )


def test_an_unknown_status_is_a_parse_error() -> None:
    """update-plan.md §2: unknown status fails the whole call."""
    text = _parse_text(_args(("a", "done")))
    assert text.startswith("failed to parse update_plan arguments: plan.0.status: ")


@pytest.mark.parametrize(
    "input_json",
    [
        '{"plan":[],"notes":"x"}',
        '{"plan":[{"step":"a","status":"pending","owner":"me"}]}',
    ],
)
def test_an_unknown_field_is_a_parse_error(input_json: str) -> None:
    """update-plan.md §2: unknown fields are rejected on the arguments and on each step."""
    text = _parse_text(input_json)
    assert text.startswith("failed to parse update_plan arguments: ")
    assert "owner" in text or "notes" in text


@pytest.mark.parametrize(
    "input_json",
    ["not json", "[]", '{"plan":{}}', '{"plan":[{"step":3,"status":"pending"}]}'],
)
def test_malformed_arguments_are_parse_errors(input_json: str) -> None:
    """update-plan.md §4: a parse failure is InvalidArguments with the fixed prefix."""
    assert _parse_text(input_json).startswith("failed to parse update_plan arguments: ")


def test_a_missing_explanation_is_none_without_inheritance() -> None:
    """update-plan.md §2: missing explanation stores NULL."""
    assert parse_update_plan(_args(("a", "pending"))).explanation is None


def test_an_explicit_empty_plan_clears_it() -> None:
    """update-plan.md §2: ``plan: []`` is an explicit clear."""
    plan = read_update_plan("t1", '{"plan":[]}', NOW)
    assert plan.steps == ()
    assert unfinished_step_count(plan) == 0


def test_order_and_whitespace_are_preserved() -> None:
    """update-plan.md §2: submission order, never sorted; text stored untrimmed."""
    plan = read_update_plan("t1", _args(("  zeta  ", "pending"), ("alpha\n", "completed")), NOW)
    assert [s.step for s in plan.steps] == ["  zeta  ", "alpha\n"]


# -- rules ---------------------------------------------------------------------------------


def test_more_than_128_steps_fail_with_the_fixed_text() -> None:
    """update-plan.md §4: ``plan must not exceed 128 steps``."""
    steps = [(f"s{i}", "pending") for i in range(MAX_PLAN_STEPS + 1)]
    assert _rule_text(_args(*steps)) == "plan must not exceed 128 steps"


def test_exactly_128_steps_are_accepted() -> None:
    """update-plan.md §2: the limit itself is allowed."""
    steps = [(f"s{i}", "pending") for i in range(MAX_PLAN_STEPS)]
    assert len(read_update_plan("t1", _args(*steps), NOW).steps) == MAX_PLAN_STEPS


def test_a_blank_step_fails_with_its_zero_based_index() -> None:
    """update-plan.md §4: ``plan step <index> must not be blank`` after trimming."""
    text = _rule_text(_args(("ok", "pending"), (" \t\n ", "pending")))
    assert text == "plan step 1 must not be blank"


def test_a_step_over_1024_characters_fails_with_its_index() -> None:
    """update-plan.md §2, §4: 1,024 Unicode characters, no truncation."""
    text = _rule_text(_args(("é" * (MAX_STEP_CHARS + 1), "pending")))
    assert text == "plan step 0 exceeds 1024 characters"


def test_a_step_of_exactly_1024_multibyte_characters_is_accepted() -> None:
    """update-plan.md §2: the limit counts characters, not bytes."""
    plan = read_update_plan("t1", _args(("界" * MAX_STEP_CHARS, "pending")), NOW)
    assert len(plan.steps[0].step) == MAX_STEP_CHARS


def test_two_in_progress_steps_fail_naming_both_indexes() -> None:
    """update-plan.md §4: the fixed text with the first and second in_progress index."""
    text = _rule_text(
        _args(("a", "completed"), ("b", "in_progress"), ("c", "pending"), ("d", "in_progress"))
    )
    assert text == "at most one step may be in_progress, but steps 1 and 3 are both in_progress"


def test_an_all_completed_plan_is_accepted() -> None:
    """update-plan.md §2: all completed with no in_progress is fine."""
    plan = read_update_plan("t1", _args(("a", "completed"), ("b", "completed")), NOW)
    assert unfinished_step_count(plan) == 0


def test_a_rule_violation_and_a_parse_failure_are_plan_errors_with_distinct_codes() -> None:
    """DESIGN.md §4.5: stable unique codes; both are results the model sees."""
    codes = [
        c.code
        for c in vars(plan_errors).values()
        if isinstance(c, type) and issubclass(c, PlanError)
    ]
    assert len(codes) == len(set(codes)) == 3
    assert issubclass(PlanRuleViolation, PlanError)
    assert issubclass(PlanArgumentsUnparsable, PlanError)


# -- the value, the count, the definition ----------------------------------------------------


def test_the_turn_plan_keeps_the_call_values() -> None:
    """update-plan.md §2: TurnPlan{turn_id, explanation?, steps, updated_at}."""
    plan = read_update_plan("t9", _args(("a", "in_progress"), explanation="why"), NOW)
    assert plan == TurnPlan(
        turn_id="t9",
        explanation="why",
        steps=(PlanStep(step="a", status=PlanStepStatus.IN_PROGRESS),),
        updated_at=NOW,
    )
    assert orjson.loads(orjson.dumps(PlanView.of(plan))) == {  # the one plan shape of the wire
        "explanation": "why",
        "steps": [{"step": "a", "status": "in_progress"}],
        "updated_at": "2026-11-29T12:00:00Z",
    }


def test_unfinished_count_is_none_without_a_plan_and_counts_pending_and_in_progress() -> None:
    """update-plan.md §5: NULL / 0 / pending + in_progress."""
    assert unfinished_step_count(None) is None
    plan = read_update_plan(
        "t1", _args(("a", "completed"), ("b", "in_progress"), ("c", "pending")), NOW
    )
    assert unfinished_step_count(plan) == 2


def test_the_definition_is_the_fixed_description_and_schema() -> None:
    """update-plan.md §3: exact description and JSON Schema."""
    definition = update_plan_definition()
    assert definition.name == "update_plan"
    assert definition.description == UPDATE_PLAN_DESCRIPTION
    assert definition.description.startswith(
        "Maintain a checklist for the task you are working on right now.\n\nUse it for"
    )
    assert definition.parameters == {
        "type": "object",
        "properties": {
            "explanation": {
                "type": "string",
                "description": "Optional one-line note about why the plan changed.",
            },
            "plan": {
                "type": "array",
                "description": "The complete checklist. Each call replaces the entire plan, "
                "so always send every step, not just the ones that changed.",
                "maxItems": 128,
                "items": {
                    "type": "object",
                    "properties": {
                        "step": {"type": "string", "description": "What this step accomplishes."},
                        "status": {
                            "type": "string",
                            "enum": ["pending", "in_progress", "completed"],
                        },
                    },
                    "required": ["step", "status"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["plan"],
        "additionalProperties": False,
    }


def test_the_schema_and_the_parser_agree_on_the_fields() -> None:
    """tools.md §2: schema and deserialisation describe the same input."""
    params = update_plan_definition().parameters
    assert isinstance(params["properties"], dict)
    assert set(params["properties"]) == set(UpdatePlanArgs.model_fields)
    plan_schema = params["properties"]["plan"]
    assert isinstance(plan_schema, dict) and isinstance(plan_schema["items"], dict)
    item_props = plan_schema["items"]["properties"]
    assert isinstance(item_props, dict)
    assert set(item_props) == {f.name for f in dataclasses.fields(PlanStep)}


def test_the_success_body_is_plan_updated() -> None:
    """update-plan.md §4: success body is exactly ``Plan updated``."""
    assert PLAN_UPDATED_TEXT == "Plan updated"
