"""The ``update_plan`` control tool (update-plan.md §3, §4): its definition, the system-prompt rules
advertised with it, argument parsing and the rule checks. Pure; the runner commits the result."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime

from pydantic import ValidationError

from openwork_chat_state.messages import JsonObject, ToolDefinition
from openwork_core.ids import TurnId
from openwork_core.plan.errors import PlanArgumentsUnparsable, PlanRuleViolation
from openwork_core.plan.model import (
    MAX_PLAN_STEPS,
    MAX_STEP_CHARS,
    PlanStep,
    PlanStepStatus,
    TurnPlan,
    UpdatePlanArgs,
)

UPDATE_PLAN_TOOL_NAME = "update_plan"

UPDATE_PLAN_DESCRIPTION = """Maintain a checklist for the task you are working on right now.

Use it for multi-step work that benefits from tracking; skip it for simple, single-step requests. Each call replaces the whole plan, so send the full list every time. Mark a step in_progress before starting it and completed as soon as it is done — at most one step may be in_progress at a time. Before finishing the task, mark every step completed."""

EXPLANATION_DESCRIPTION = "Optional one-line note about why the plan changed."
PLAN_DESCRIPTION = (
    "The complete checklist. Each call replaces the entire plan, "
    "so always send every step, not just the ones that changed."
)
STEP_DESCRIPTION = "What this step accomplishes."

UPDATE_PLAN_PROMPT_RULES = """## Task checklists

You have an `update_plan` tool for tracking multi-step work.

- Skip it for simple, single-step tasks. An unnecessary checklist is noise.
- For complex, multi-stage work, or work that needs repeated verification, create a plan first.
- Mark a step `in_progress` before you start it, and `completed` as soon as it is done. Do not batch all the updates until the end.
- At most one step may be `in_progress` at a time during normal execution.
- Before you finish the task, mark every step `completed`.
- Do not pad the plan with contentless steps like "read the code" or "answer the user".
- After a successful call, just keep working. Do not paste the plan back into the chat."""

PLAN_UPDATED_TEXT = "Plan updated"
"""The whole success body; the plan itself lives only in the call arguments (§4)."""

PARSE_FAILURE_PREFIX = "failed to parse update_plan arguments: "


def update_plan_parameters() -> JsonObject:
    """The JSON Schema of update-plan.md §3 (a fresh object on every call)."""
    return {
        "type": "object",
        "properties": {
            "explanation": {"type": "string", "description": EXPLANATION_DESCRIPTION},
            "plan": {
                "type": "array",
                "description": PLAN_DESCRIPTION,
                "maxItems": MAX_PLAN_STEPS,
                "items": {
                    "type": "object",
                    "properties": {
                        "step": {"type": "string", "description": STEP_DESCRIPTION},
                        "status": {"type": "string", "enum": [s.value for s in PlanStepStatus]},
                    },
                    "required": ["step", "status"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["plan"],
        "additionalProperties": False,
    }


@functools.cache
def update_plan_definition() -> ToolDefinition:
    """Built once per process."""
    return ToolDefinition(
        name=UPDATE_PLAN_TOOL_NAME,
        description=UPDATE_PLAN_DESCRIPTION,
        parameters=update_plan_parameters(),
    )


def _parser_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "input"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def parse_update_plan(input_json: str) -> UpdatePlanArgs:
    """Typed arguments, or ``PlanArgumentsUnparsable`` whose text is the model-visible body
    ``failed to parse update_plan arguments: <parser error>``. Limits are not checked here."""
    try:
        return UpdatePlanArgs.model_validate_json(input_json)
    except ValidationError as exc:
        raise PlanArgumentsUnparsable(PARSE_FAILURE_PREFIX + _parser_error(exc)) from None


def too_many_steps_text() -> str:
    return f"plan must not exceed {MAX_PLAN_STEPS} steps"


def blank_step_text(index: int) -> str:
    return f"plan step {index} must not be blank"


def step_too_long_text(index: int) -> str:
    return f"plan step {index} exceeds {MAX_STEP_CHARS} characters"


def two_in_progress_text(first: int, second: int) -> str:
    return (
        f"at most one step may be in_progress, but steps {first} and {second} are both in_progress"
    )


def plan_violation(steps: Sequence[PlanStep]) -> str | None:
    """The first violated rule's text (0-based indexes), or None. Steps are checked in order;
    the step count first."""
    if len(steps) > MAX_PLAN_STEPS:
        return too_many_steps_text()
    in_progress: int | None = None
    for index, step in enumerate(steps):
        if not step.step.strip():
            return blank_step_text(index)
        if len(step.step) > MAX_STEP_CHARS:
            return step_too_long_text(index)
        if step.status is PlanStepStatus.IN_PROGRESS:
            if in_progress is not None:
                return two_in_progress_text(in_progress, index)
            in_progress = index
    return None


def validate_plan(args: UpdatePlanArgs) -> UpdatePlanArgs:
    """``args`` unchanged, or ``PlanRuleViolation`` with one of the four fixed texts."""
    violation = plan_violation(args.plan)
    if violation is not None:
        raise PlanRuleViolation(violation)
    return args


def read_update_plan(turn_id: TurnId, input_json: str, updated_at: datetime) -> TurnPlan:
    """update-plan.md §4 step 6 in one call: parse, check, and build the Turn's new plan.
    Raises ``PlanArgumentsUnparsable`` or ``PlanRuleViolation`` (both ``PlanError``)."""
    args = validate_plan(parse_update_plan(input_json))
    return TurnPlan.from_args(turn_id, args, updated_at)
