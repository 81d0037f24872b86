"""Which calls let their response be written after they ran (docs/performance.md "One
transaction per steady call"): only calls that can neither have a side effect nor ask the user."""

from __future__ import annotations

import pytest

from openwork_core.agents.tools import AgentToolName
from openwork_core.session.runner.tool_step import step_effect_free
from openwork_core.session.toolset import (
    Agent,
    ConversationHistory,
    NotFound,
    Registered,
    ResolvedTurnTool,
    UpdatePlan,
)
from openwork_tools.definition import RiskHint


@pytest.mark.parametrize(
    ("resolved", "risk", "effect_free"),
    [
        (Registered("read"), RiskHint.READ_ONLY, True),
        (Registered("write"), RiskHint.WORKSPACE_MUTATION, False),
        (Registered("bash"), RiskHint.PROCESS_EXECUTION, False),
        (Registered("unknown_risk"), None, False),
        (NotFound("nope"), None, True),
        (ConversationHistory(), None, True),
        (UpdatePlan(), None, False),
        (Agent(AgentToolName.SPAWN_AGENT), None, False),
        (Agent(AgentToolName.WAIT_AGENT), None, False),
    ],
)
def test_only_calls_without_side_effect_or_card_are_effect_free(
    resolved: ResolvedTurnTool, risk: RiskHint | None, effect_free: bool
) -> None:
    assert step_effect_free('{"path": "a"}', resolved, risk) is effect_free


@pytest.mark.parametrize("arguments", ["[1]", "not json", '"text"'])
def test_arguments_that_are_not_an_object_are_effect_free_whatever_the_tool(
    arguments: str,
) -> None:
    """They get the invalid-input result; the tool never runs."""
    assert step_effect_free(arguments, Registered("bash"), RiskHint.PROCESS_EXECUTION)
    assert step_effect_free(arguments, UpdatePlan(), None)
