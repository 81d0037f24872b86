"""update_plan: the per-Turn checklist control tool (update-plan.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openwork_core.lazy_exports import lazy_getattr

if TYPE_CHECKING:
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

_EXPORTS = {
    "CURRENT_PLAN_HEADING": "openwork_core.plan.reminder",
    "MAX_PLAN_STEPS": "openwork_core.plan.model",
    "MAX_STEP_CHARS": "openwork_core.plan.model",
    "PLAN_UPDATED_TEXT": "openwork_core.plan.tool",
    "PlanArgumentsUnparsable": "openwork_core.plan.errors",
    "PlanError": "openwork_core.plan.errors",
    "PlanRuleViolation": "openwork_core.plan.errors",
    "PlanStep": "openwork_core.plan.model",
    "PlanStepStatus": "openwork_core.plan.model",
    "TURN_PLAN_EXTENSION_KEY": "openwork_core.plan.reminder",
    "TURN_PLAN_EXTENSION_SCHEMA_VERSION": "openwork_core.plan.reminder",
    "TurnPlan": "openwork_core.plan.model",
    "TurnPlanRecord": "openwork_core.plan.model",
    "TurnPlanSnapshot": "openwork_core.plan.model",
    "UPDATE_PLAN_DESCRIPTION": "openwork_core.plan.tool",
    "UPDATE_PLAN_PROMPT_RULES": "openwork_core.plan.tool",
    "UPDATE_PLAN_TOOL_NAME": "openwork_core.plan.tool",
    "UpdatePlanArgs": "openwork_core.plan.model",
    "escape_reminder_text": "openwork_core.plan.reminder",
    "parse_update_plan": "openwork_core.plan.tool",
    "plan_violation": "openwork_core.plan.tool",
    "read_update_plan": "openwork_core.plan.tool",
    "render_plan_section": "openwork_core.plan.reminder",
    "steps_from_json": "openwork_core.plan.model",
    "steps_to_json": "openwork_core.plan.model",
    "unfinished_step_count": "openwork_core.plan.model",
    "update_plan_definition": "openwork_core.plan.tool",
    "update_plan_parameters": "openwork_core.plan.tool",
    "validate_plan": "openwork_core.plan.tool",
}
"""Each public name's module: nothing is imported until a name is used."""

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

if not TYPE_CHECKING:  # for mypy the names are the imports above: a misspelt one is an error
    __getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
