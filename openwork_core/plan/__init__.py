"""update_plan: the per-Turn checklist control tool (update-plan.md)."""

from __future__ import annotations

from openwork_core.plan.errors import PlanArgumentsUnparsable, PlanError, PlanRuleViolation
from openwork_core.plan.model import (
    MAX_PLAN_STEPS,
    MAX_STEP_CHARS,
    PlanStep,
    PlanStepStatus,
    TurnPlan,
    TurnPlanRecord,
    TurnPlanSnapshot,
    UpdatePlanArgs,
    steps_from_json,
    steps_to_json,
    unfinished_step_count,
)
from openwork_core.plan.reminder import (
    CURRENT_PLAN_HEADING,
    TURN_PLAN_EXTENSION_KEY,
    TURN_PLAN_EXTENSION_SCHEMA_VERSION,
    escape_reminder_text,
    render_plan_section,
)
from openwork_core.plan.tool import (
    PLAN_UPDATED_TEXT,
    UPDATE_PLAN_DESCRIPTION,
    UPDATE_PLAN_PROMPT_RULES,
    UPDATE_PLAN_TOOL_NAME,
    parse_update_plan,
    plan_violation,
    read_update_plan,
    update_plan_definition,
    update_plan_parameters,
    validate_plan,
)

__all__ = [
    "CURRENT_PLAN_HEADING",
    "MAX_PLAN_STEPS",
    "MAX_STEP_CHARS",
    "PLAN_UPDATED_TEXT",
    "TURN_PLAN_EXTENSION_KEY",
    "TURN_PLAN_EXTENSION_SCHEMA_VERSION",
    "UPDATE_PLAN_DESCRIPTION",
    "UPDATE_PLAN_PROMPT_RULES",
    "UPDATE_PLAN_TOOL_NAME",
    "PlanArgumentsUnparsable",
    "PlanError",
    "PlanRuleViolation",
    "PlanStep",
    "PlanStepStatus",
    "TurnPlan",
    "TurnPlanRecord",
    "TurnPlanSnapshot",
    "UpdatePlanArgs",
    "escape_reminder_text",
    "parse_update_plan",
    "plan_violation",
    "read_update_plan",
    "render_plan_section",
    "steps_from_json",
    "steps_to_json",
    "unfinished_step_count",
    "update_plan_definition",
    "update_plan_parameters",
    "validate_plan",
]
