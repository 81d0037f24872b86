"""update_plan errors with stable codes (update-plan.md §4). A failed call is a tool result the
model sees; ``str(error)`` is that result's body."""

from __future__ import annotations

from typing import ClassVar

from openwork_chat_state.error_root import OpenWorkError


class PlanError(OpenWorkError):
    code: ClassVar[str] = "plan_error"


class PlanArgumentsUnparsable(PlanError):
    """Missing ``plan``, an unknown field or status, a wrong type (tool result ``InvalidArguments``)."""

    code = "plan_arguments_unparsable"


class PlanRuleViolation(PlanError):
    """A runtime invariant or limit of update-plan.md §2 (tool result ``InvalidArguments``)."""

    code = "plan_rule_violation"
