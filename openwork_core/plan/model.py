"""The plan of one Turn (update-plan.md §2): steps, arguments, the stored snapshot."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, ConfigDict, TypeAdapter
from pydantic.dataclasses import dataclass as validated_dataclass

from openwork_core.ids import TurnId

MAX_PLAN_STEPS = 128
MAX_STEP_CHARS = 1024


class PlanStepStatus(enum.StrEnum):
    """The same spelling in schema, database, events, reminder and UI."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"


@validated_dataclass(frozen=True, slots=True, config=ConfigDict(extra="forbid", strict=True))
class PlanStep:
    """One checklist item; unknown fields are rejected, ``step`` is stored untrimmed.

    A dataclass, so ``orjson.dumps`` writes it as ``{"step": …, "status": …}`` in events."""

    step: str
    status: PlanStepStatus


class UpdatePlanArgs(BaseModel):
    """The whole plan of one call: ``plan`` is required (``[]`` clears), ``explanation`` is not."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    explanation: str | None = None
    plan: tuple[PlanStep, ...]


_STEPS: TypeAdapter[tuple[PlanStep, ...]] = TypeAdapter(tuple[PlanStep, ...])


def steps_to_json(steps: tuple[PlanStep, ...]) -> str:
    """The ``turn_plans.steps`` JSON array: ``[{"step": …, "status": …}]`` in plan order."""
    return _STEPS.dump_json(steps).decode()


def steps_from_json(text: str | bytes) -> tuple[PlanStep, ...]:
    return _STEPS.validate_json(text)


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnPlan:
    """The current plan of a Turn: the latest successful call, replaced fully by the next.

    ``updated_at`` is timezone-aware UTC (DESIGN.md §2: ``timestamptz``)."""

    turn_id: TurnId
    explanation: str | None
    steps: tuple[PlanStep, ...]
    updated_at: datetime

    @staticmethod
    def from_args(turn_id: TurnId, args: UpdatePlanArgs, updated_at: datetime) -> TurnPlan:
        return TurnPlan(
            turn_id=turn_id, explanation=args.explanation, steps=args.plan, updated_at=updated_at
        )


def unfinished_step_count(plan: TurnPlan | None) -> int | None:
    """``turns.plan_unfinished_step_count`` (update-plan.md §5): None without a successful call,
    else the number of pending and in_progress steps (0 when all completed or cleared)."""
    if plan is None:
        return None
    return sum(1 for s in plan.steps if s.status is not PlanStepStatus.COMPLETED)
