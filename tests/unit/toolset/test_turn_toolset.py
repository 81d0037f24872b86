"""TurnToolset: the Tool Surface of a session (context-window.md §5, update-plan.md §3, tools.md §3,
compaction.md §8.4)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from openwork_core.agents.tools import (
    AGENT_TOOL_NAMES,
    AgentToolName,
    agent_tool_definitions,
    sub_agent_prompt_rules,
)
from openwork_core.plan.tool import UPDATE_PLAN_PROMPT_RULES, update_plan_definition
from openwork_core.session import toolset as toolset_module
from openwork_core.session.toolset import (
    CONVERSATION_HISTORY_DESCRIPTION,
    Agent,
    ConversationHistory,
    ConversationHistoryArgs,
    DefinitionMismatch,
    NameCollision,
    NotFound,
    Registered,
    RootSurface,
    SubAgentSurface,
    TurnToolset,
    TurnToolsetError,
    UpdatePlan,
    control_surface,
    conversation_history_definition,
    parse_conversation_history,
)
from openwork_tools.builtin.registry import BUILTIN_TOOL_IDS, builtin_registry
from openwork_tools.context import ToolCallContext, ToolSessionContext
from openwork_tools.definition import RiskHint, Tool
from openwork_tools.modes import SandboxStatus
from openwork_tools.registry import FinalizedToolset, ToolRegistry, ToolsetConfig
from openwork_tools.results import ToolResult
from openwork_tools.schema import ToolInput

DEFAULT_IDS = ("read", "write", "edit", "grep", "glob", "list", "bash")


class _Empty(ToolInput):
    pass


class _NamedTool(Tool[_Empty]):
    input_model = _Empty

    def __init__(self, name: str) -> None:
        super().__init__(name, f"a registry tool called {name}", RiskHint.READ_ONLY)

    async def execute(
        self, session: ToolSessionContext, call: ToolCallContext, tool_input: _Empty
    ) -> ToolResult:
        raise AssertionError("never executed here")


def _session(tmp_path: Path) -> ToolSessionContext:
    return ToolSessionContext(
        working_directory=tmp_path, sandbox=SandboxStatus(available=True), home=tmp_path
    )


def _builtin(tmp_path: Path, ids: tuple[str, ...] = DEFAULT_IDS) -> FinalizedToolset:
    return builtin_registry().finalize(ToolsetConfig(ids), _session(tmp_path))


def _with_tool(tmp_path: Path, name: str) -> FinalizedToolset:
    registry = ToolRegistry([_NamedTool("read"), _NamedTool(name)])
    return registry.finalize(ToolsetConfig(("read", name)), _session(tmp_path))


def test_a_root_session_advertises_update_plan_once_after_the_registry_tools(
    tmp_path: Path,
) -> None:
    """update-plan.md §3, tools.md §3: control tools are appended after the toolset."""
    toolset = TurnToolset.new(_builtin(tmp_path), RootSurface(), conversation_history=False)
    assert toolset.names == (*DEFAULT_IDS, "update_plan", *AGENT_TOOL_NAMES)
    assert [d.name for d in toolset.definitions] == list(toolset.names)
    assert toolset.definitions[len(DEFAULT_IDS)] == update_plan_definition()
    assert toolset.names.count("update_plan") == 1


def test_a_root_session_advertises_the_five_agent_tools_after_update_plan_in_spec_order(
    tmp_path: Path,
) -> None:
    """multi-agent.md §5, context-window.md §5: root surfaces carry the control tools, their
    descriptions state the surface's limit."""
    toolset = TurnToolset.new(
        _builtin(tmp_path), RootSurface(max_active_turns=5), conversation_history=True
    )
    assert toolset.names[-5:] == AGENT_TOOL_NAMES
    assert toolset.definitions[-5:] == agent_tool_definitions(5)
    for tool in AgentToolName:
        assert toolset.resolve(tool.value) == Agent(tool)


def test_a_sub_agent_neither_advertises_nor_dispatches_the_agent_tools(tmp_path: Path) -> None:
    """multi-agent.md §5: sub-agents get none of the five tools, advertised or dispatched."""
    ids = ("read", "grep", "glob", "list", "bash")
    toolset = TurnToolset.new(
        _builtin(tmp_path, ids), SubAgentSurface(), conversation_history=False
    )
    for name in AGENT_TOOL_NAMES:
        assert toolset.resolve(name) == NotFound(name)
        assert name not in toolset.names


def test_an_agent_tool_named_like_a_registry_tool_fails_construction(tmp_path: Path) -> None:
    """context-window.md §5: a control tool colliding with a registry tool stops the load."""
    with pytest.raises(NameCollision) as caught:
        TurnToolset.new(
            _with_tool(tmp_path, "wait_agent"), RootSurface(), conversation_history=False
        )
    assert caught.value.name == "wait_agent"


def test_the_root_prompt_rules_are_the_plan_rules_a_blank_line_and_the_sub_agent_rules(
    tmp_path: Path,
) -> None:
    """multi-agent.md §5: ``agent_prompt_rules`` appended to the root system prompt with the
    limit of ``AgentControl.max_active_turns``."""
    root = TurnToolset.new(
        _builtin(tmp_path), RootSurface(max_active_turns=4), conversation_history=True
    )
    assert root.system_prompt() == UPDATE_PLAN_PROMPT_RULES + "\n\n" + sub_agent_prompt_rules(4)
    assert "up to 4 read-only explorer turns" in root.system_prompt()


def test_a_root_session_dispatches_update_plan(tmp_path: Path) -> None:
    """context-window.md §5: every advertised name resolves."""
    toolset = TurnToolset.new(_builtin(tmp_path), RootSurface(), conversation_history=False)
    assert toolset.resolve("update_plan") == UpdatePlan()


def test_a_sub_agent_neither_advertises_nor_dispatches_update_plan(tmp_path: Path) -> None:
    """update-plan.md §1, context-window.md §5: sub-agents do not see or call control tools."""
    ids = ("read", "grep", "glob", "list", "bash")
    toolset = TurnToolset.new(
        _builtin(tmp_path, ids), SubAgentSurface(), conversation_history=False
    )
    assert toolset.names == ids
    assert toolset.resolve("update_plan") == NotFound("update_plan")
    assert toolset.system_prompt() == ""


def test_registry_tools_resolve_to_themselves_in_registry_order(tmp_path: Path) -> None:
    """tools.md §3 invariant (4): definition order = ToolsetConfig order."""
    toolset = TurnToolset.new(_builtin(tmp_path), RootSurface(), conversation_history=True)
    for name in DEFAULT_IDS:
        assert toolset.resolve(name) == Registered(name)
    assert toolset.definitions[: len(DEFAULT_IDS)] == _builtin(tmp_path).definitions


def test_an_unknown_name_resolves_to_not_found_with_the_tool_not_found_text(
    tmp_path: Path,
) -> None:
    """context-window.md §5: a name that is not advertised returns ToolNotFound."""
    toolset = TurnToolset.new(_builtin(tmp_path), RootSurface(), conversation_history=True)
    resolved = toolset.resolve("spawn_worker")
    assert resolved == NotFound("spawn_worker")
    assert isinstance(resolved, NotFound)
    assert resolved.text == "tool not found: spawn_worker"
    assert "spawn_worker" not in toolset.names


def test_every_advertised_name_resolves_and_nothing_else_does(tmp_path: Path) -> None:
    """context-window.md §5: definitions and dispatch come from the same selection."""
    toolset = TurnToolset.new(_builtin(tmp_path), RootSurface(), conversation_history=True)
    for name in toolset.names:
        assert not isinstance(toolset.resolve(name), NotFound)
    for name in set(BUILTIN_TOOL_IDS) - set(toolset.names):
        assert isinstance(toolset.resolve(name), NotFound)


def test_the_same_input_builds_the_same_surface_twice(tmp_path: Path) -> None:
    """context-window.md §5: deterministic order; the request's tool bytes are stable."""
    first = TurnToolset.new(_builtin(tmp_path), RootSurface(), conversation_history=True)
    second = TurnToolset.new(_builtin(tmp_path), RootSurface(), conversation_history=True)
    assert first.names == second.names
    assert orjson.dumps(first.definitions) == orjson.dumps(second.definitions)
    assert first.system_prompt() == second.system_prompt()


def test_the_default_agent_registers_conversation_history_before_the_control_tools(
    tmp_path: Path,
) -> None:
    """tools.md §3 table, compaction.md §8.4: Core-registered conversation_history."""
    toolset = TurnToolset.new(_builtin(tmp_path), RootSurface(), conversation_history=True)
    assert toolset.names == (
        *DEFAULT_IDS,
        "conversation_history",
        "update_plan",
        *AGENT_TOOL_NAMES,
    )
    assert toolset.resolve("conversation_history") == ConversationHistory()
    definition = toolset.definitions[len(DEFAULT_IDS)]
    assert definition == conversation_history_definition()
    assert definition.description == CONVERSATION_HISTORY_DESCRIPTION


def test_conversation_history_is_absent_unless_registered(tmp_path: Path) -> None:
    """compaction.md §8.4: default agent only."""
    toolset = TurnToolset.new(_builtin(tmp_path), RootSurface(), conversation_history=False)
    assert toolset.resolve("conversation_history") == NotFound("conversation_history")


def test_a_control_tool_named_like_a_registry_tool_fails_construction(tmp_path: Path) -> None:
    """update-plan.md §3: NameCollision, the session does not start."""
    with pytest.raises(NameCollision) as caught:
        TurnToolset.new(
            _with_tool(tmp_path, "update_plan"), RootSurface(), conversation_history=False
        )
    assert caught.value.name == "update_plan"
    assert caught.value.code == "tool_name_collision"
    assert isinstance(caught.value, TurnToolsetError)


def test_conversation_history_named_like_a_registry_tool_fails_construction(
    tmp_path: Path,
) -> None:
    """context-window.md §5: a Core-added name must not shadow a registry tool."""
    with pytest.raises(NameCollision):
        TurnToolset.new(
            _with_tool(tmp_path, "conversation_history"),
            SubAgentSurface(),
            conversation_history=True,
        )


def test_a_sub_agent_surface_tolerates_a_registry_tool_named_update_plan(
    tmp_path: Path,
) -> None:
    """update-plan.md §3: only advertised control tools can collide; SubAgent adds none."""
    toolset = TurnToolset.new(
        _with_tool(tmp_path, "update_plan"), SubAgentSurface(), conversation_history=False
    )
    assert toolset.resolve("update_plan") == Registered("update_plan")
    assert toolset.system_prompt() == ""


def test_the_prompt_rules_are_the_update_plan_rules_exactly_when_it_is_advertised(
    tmp_path: Path,
) -> None:
    """update-plan.md §3: UPDATE_PLAN_PROMPT_RULES appended exactly when advertised."""
    root = TurnToolset.new(_builtin(tmp_path), RootSurface(), conversation_history=True)
    sub = TurnToolset.new(_builtin(tmp_path), SubAgentSurface(), conversation_history=True)
    assert root.system_prompt().startswith(UPDATE_PLAN_PROMPT_RULES + "\n\n")
    assert root.system_prompt().startswith("## Task checklists\n\nYou have an `update_plan`")
    assert sub.system_prompt() == ""


def test_the_surface_of_a_session_follows_its_parent() -> None:
    """update-plan.md §1: root sessions have no parent; sub-agents do."""
    assert control_surface(None) == RootSurface()
    assert control_surface(None, 2) == RootSurface(max_active_turns=2)
    assert control_surface("parent") == SubAgentSurface()


def test_a_registry_definition_under_another_name_fails_construction(tmp_path: Path) -> None:
    """context-window.md §5: what is advertised is what is dispatched."""

    class Renamed(_NamedTool):
        def definition(self, *, sandbox_available: bool):  # type: ignore[no-untyped-def]
            plain = super().definition(sandbox_available=sandbox_available)
            return type(plain)(name="other", description=plain.description)

    registry = ToolRegistry([Renamed("read")])
    finalized = registry.finalize(ToolsetConfig(("read",)), _session(tmp_path))
    with pytest.raises(DefinitionMismatch):
        TurnToolset.new(finalized, RootSurface(), conversation_history=False)


def test_toolset_error_codes_are_unique() -> None:
    """DESIGN.md §4.5: stable, unique codes."""
    codes = [
        c.code
        for c in vars(toolset_module).values()
        if isinstance(c, type) and issubclass(c, TurnToolsetError)
    ]
    assert len(codes) == len(set(codes)) == 3


# -- conversation_history arguments (compaction.md §8.4) -------------------------------------


def test_conversation_history_schema_is_three_optional_bounded_fields() -> None:
    """compaction.md §8.4: compactionId?, afterSequence >= 0, limit 1-50, nothing else."""
    params = conversation_history_definition().parameters
    assert params["additionalProperties"] is False
    assert "required" not in params
    props = params["properties"]
    assert isinstance(props, dict)
    assert set(props) == {"compactionId", "afterSequence", "limit"}
    after, limit = props["afterSequence"], props["limit"]
    assert isinstance(after, dict) and isinstance(limit, dict)
    assert (after["type"], after["minimum"]) == ("integer", 0)
    assert (limit["type"], limit["minimum"], limit["maximum"]) == ("integer", 1, 50)
    compaction = props["compactionId"]
    assert isinstance(compaction, dict) and compaction["type"] == "string"


def test_conversation_history_without_arguments_reads_the_latest_checkpoint_from_the_start() -> (
    None
):
    """compaction.md §8.4: defaults limit 20, afterSequence 0, latest checkpoint."""
    args = parse_conversation_history("{}")
    assert args == ConversationHistoryArgs()
    assert isinstance(args, ConversationHistoryArgs)
    assert args.compaction_id is None
    assert (args.effective_after_sequence, args.effective_limit) == (0, 20)


def test_conversation_history_reads_camel_case_arguments() -> None:
    """compaction.md §8.4: ConversationTranscriptQuery{compactionId?, afterSequence?, limit?}."""
    args = parse_conversation_history('{"compactionId":"cmp_1","afterSequence":7,"limit":50}')
    assert isinstance(args, ConversationHistoryArgs)
    assert (args.compaction_id, args.effective_after_sequence, args.effective_limit) == (
        "cmp_1",
        7,
        50,
    )


@pytest.mark.parametrize(
    "input_json",
    [
        '{"limit":0}',
        '{"limit":51}',
        '{"afterSequence":-1}',
        '{"afterSequence":"3"}',
        '{"limit":2.5}',
        '{"after_sequence":3}',
        '{"extra":true}',
        "[1]",
    ],
)
def test_conversation_history_rejects_out_of_range_or_unknown_arguments(input_json: str) -> None:
    """compaction.md §8.4 ranges; tools.md §2: failure text starts with ``invalid tool input:``."""
    result = parse_conversation_history(input_json)
    assert isinstance(result, str)
    assert result.startswith("invalid tool input: ")
