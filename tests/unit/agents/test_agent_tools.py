"""The five control tools: schemas, parsing, bodies, descriptions, prompt rules, error codes
(multi-agent.md §5; session-runtime.md §4 wait_agent streak)."""

from __future__ import annotations

import inspect
from datetime import UTC, datetime, timedelta, timezone

import orjson
import pytest
from pydantic import ValidationError

from openwork_core.agents import errors as agent_errors
from openwork_core.agents.errors import AgentError, AgentErrorCode, error_body
from openwork_core.agents.tools import (
    AGENT_TOOL_NAMES,
    SUB_AGENT_PROMPT_RULES,
    AgentListEntry,
    AgentStatus,
    AgentToolName,
    FollowupTaskArgs,
    InterruptAgentArgs,
    ListAgentsArgs,
    SpawnAgentArgs,
    WaitAgentArgs,
    WaitTimeoutStreak,
    agent_status,
    agent_tool_definitions,
    followup_result_body,
    interrupt_result_body,
    list_agents_body,
    parse_agent_tool_args,
    spawn_result_body,
    sub_agent_prompt_rules,
    wait_result_body,
)
from openwork_core.storage.records import TurnStatus

SPEC_PROMPT_RULES = """## Sub-agent delegation

You can run up to 3 read-only explorer turns concurrently. Delegate when you have multiple specific, bounded codebase questions that can proceed independently, especially when their intermediate research should stay out of the parent context. Keep doing useful parent-side work while explorers run. Handle a single small question locally. Keep critical-path research local when your next action depends on its result. Do not delegate work you already investigated or repeatedly delegate the same unresolved question. Use wait_agent only when waiting is the next useful action; delivered messages appear before the next model call. Reuse an idle explorer with followup_task when its existing context helps."""

VALID_INPUT = {
    AgentToolName.SPAWN_AGENT: {"task_name": "scan", "message": "Where is auth?"},
    AgentToolName.WAIT_AGENT: {},
    AgentToolName.LIST_AGENTS: {},
    AgentToolName.FOLLOWUP_TASK: {"task_name": "scan", "message": "And the tests?"},
    AgentToolName.INTERRUPT_AGENT: {"task_name": "scan"},
}

ARGS_OF: dict[AgentToolName, type[object]] = {
    AgentToolName.SPAWN_AGENT: SpawnAgentArgs,
    AgentToolName.WAIT_AGENT: WaitAgentArgs,
    AgentToolName.LIST_AGENTS: ListAgentsArgs,
    AgentToolName.FOLLOWUP_TASK: FollowupTaskArgs,
    AgentToolName.INTERRUPT_AGENT: InterruptAgentArgs,
}


def _parse(name: AgentToolName, value: object) -> object:
    return parse_agent_tool_args(name, orjson.dumps(value).decode())


def test_the_five_tools_are_named_in_the_spec_order() -> None:
    """§5 table order."""
    assert AGENT_TOOL_NAMES == (
        "spawn_agent",
        "wait_agent",
        "list_agents",
        "followup_task",
        "interrupt_agent",
    )
    assert tuple(d.name for d in agent_tool_definitions()) == AGENT_TOOL_NAMES


def test_every_schema_is_a_closed_object_without_schema_or_title_keys() -> None:
    """§5: schemas reject unknown fields; generated like openwork_tools/schema.py."""
    for definition in agent_tool_definitions():
        params = definition.parameters
        assert params["type"] == "object"
        assert params["additionalProperties"] is False
        assert "properties" in params
        text = orjson.dumps(params).decode()
        assert '"title"' not in text
        assert "$schema" not in text


def test_the_schemas_carry_the_argument_names_of_section_5_and_nothing_else() -> None:
    """§5: no model / reasoning_effort / agent_type on spawn_agent."""
    props = {d.name: d.parameters["properties"] for d in agent_tool_definitions()}
    assert {n: sorted(p) for n, p in props.items() if isinstance(p, dict)} == {
        "spawn_agent": ["message", "task_name"],
        "wait_agent": ["timeout_ms"],
        "list_agents": [],
        "followup_task": ["message", "task_name"],
        "interrupt_agent": ["task_name"],
    }
    spawn = agent_tool_definitions()[0].parameters
    assert spawn["required"] == ["task_name", "message"]
    assert orjson.loads(orjson.dumps(spawn))["properties"]["task_name"]["pattern"] == (
        "^[a-z][a-z0-9_]{0,47}$"
    )


@pytest.mark.parametrize("name", list(AgentToolName))
def test_valid_arguments_parse_into_the_tool_s_model(name: AgentToolName) -> None:
    parsed = _parse(name, VALID_INPUT[name])
    assert not isinstance(parsed, str)
    assert type(parsed) is ARGS_OF[name]


@pytest.mark.parametrize("name", list(AgentToolName))
def test_unknown_fields_are_an_invalid_tool_input_for_every_tool(name: AgentToolName) -> None:
    """§5: schemas reject unknown fields (``model`` on spawn_agent included)."""
    parsed = _parse(name, {**VALID_INPUT[name], "model": "gpt"})
    assert isinstance(parsed, str)
    assert parsed.startswith("invalid tool input: ")
    assert "model: Extra inputs are not permitted" in parsed


@pytest.mark.parametrize(
    "task_name", ["Scan", "1scan", "_x", "scan-x", "", "a" + "b" * 48, "scan\n", "scan\u00e7"]
)
@pytest.mark.parametrize(
    "name", [AgentToolName.SPAWN_AGENT, AgentToolName.FOLLOWUP_TASK, AgentToolName.INTERRUPT_AGENT]
)
def test_a_malformed_task_name_is_an_invalid_tool_input(
    name: AgentToolName, task_name: str
) -> None:
    """§3, §5: ``task_name`` has the pattern, 48 characters max."""
    parsed = _parse(name, {**VALID_INPUT[name], "task_name": task_name})
    assert isinstance(parsed, str)
    assert parsed.startswith("invalid tool input: task_name: ")


def test_a_48_character_task_name_is_accepted() -> None:
    parsed = _parse(AgentToolName.INTERRUPT_AGENT, {"task_name": "a" * 48})
    assert parsed == InterruptAgentArgs(task_name="a" * 48)


@pytest.mark.parametrize("message", ["", " ", "\n\t  "])
@pytest.mark.parametrize("name", [AgentToolName.SPAWN_AGENT, AgentToolName.FOLLOWUP_TASK])
def test_a_blank_message_is_an_invalid_tool_input(name: AgentToolName, message: str) -> None:
    """§5: ``message`` must not be blank."""
    parsed = _parse(name, {"task_name": "scan", "message": message})
    assert isinstance(parsed, str)
    assert "message: " in parsed


def test_a_message_with_surrounding_whitespace_is_kept_verbatim() -> None:
    parsed = _parse(AgentToolName.SPAWN_AGENT, {"task_name": "scan", "message": "  look here \n"})
    assert parsed == SpawnAgentArgs(task_name="scan", message="  look here \n")


def test_a_missing_argument_or_a_non_object_is_an_invalid_tool_input() -> None:
    assert isinstance(_parse(AgentToolName.SPAWN_AGENT, {"task_name": "scan"}), str)
    assert isinstance(_parse(AgentToolName.FOLLOWUP_TASK, {"message": "x"}), str)
    assert isinstance(_parse(AgentToolName.LIST_AGENTS, [1]), str)
    assert isinstance(parse_agent_tool_args(AgentToolName.WAIT_AGENT, "{not json"), str)


def test_empty_input_means_no_arguments() -> None:
    """tools.md §2 (``parse_input`` reads an empty input as ``{}``)."""
    assert parse_agent_tool_args(AgentToolName.LIST_AGENTS, "") == ListAgentsArgs()


def test_wait_agent_timeout_defaults_to_60000_ms() -> None:
    """§5: default 60,000."""
    parsed = _parse(AgentToolName.WAIT_AGENT, {})
    assert parsed == WaitAgentArgs(timeout_ms=60_000)
    assert isinstance(parsed, WaitAgentArgs)
    assert parsed.timeout_s == 60.0


@pytest.mark.parametrize("timeout_ms", [10_000, 10_001, 599_999, 600_000])
def test_wait_agent_accepts_timeouts_from_10000_to_600000_ms(timeout_ms: int) -> None:
    """§5: allowed 10,000–600,000 inclusive."""
    assert _parse(AgentToolName.WAIT_AGENT, {"timeout_ms": timeout_ms}) == WaitAgentArgs(
        timeout_ms=timeout_ms
    )


@pytest.mark.parametrize("timeout_ms", [0, 9_999, 600_001, -1, 1.5, "60000", None, True])
def test_wait_agent_timeouts_outside_the_range_or_not_integers_are_argument_errors(
    timeout_ms: object,
) -> None:
    """§5: outside the range → argument error."""
    parsed = _parse(AgentToolName.WAIT_AGENT, {"timeout_ms": timeout_ms})
    assert isinstance(parsed, str)
    assert parsed.startswith("invalid tool input: timeout_ms: ")


def test_the_wait_agent_schema_states_the_bounds_and_the_default() -> None:
    wait = agent_tool_definitions()[1].parameters
    props = wait["properties"]
    assert isinstance(props, dict)
    timeout = props["timeout_ms"]
    assert isinstance(timeout, dict)
    assert (timeout["type"], timeout["minimum"], timeout["maximum"], timeout["default"]) == (
        "integer",
        10_000,
        600_000,
        60_000,
    )
    assert "required" not in wait


def test_every_description_states_the_limit_and_when_not_to_use_the_tool() -> None:
    """§5: descriptions state the limit of 3 and both when to use and when not to use."""
    for definition in agent_tool_definitions():
        text = definition.description
        assert "3 concurrent explorer turns" in text or "3 explorer turns" in text, definition.name
        assert "Use it" in text, definition.name
        assert "Do not use it" in text or "do not use it" in text, definition.name
        assert "{" not in text


def test_the_descriptions_follow_max_active_turns() -> None:
    """§5: the number comes from ``AgentControl::max_active_turns``."""
    for definition in agent_tool_definitions(5):
        assert "5 " in definition.description
        assert " 3 " not in definition.description


def test_the_description_snapshot_of_spawn_agent() -> None:
    """§11: the exact descriptions are ours; snapshot the one the model reads first."""
    assert agent_tool_definitions()[0].description == (
        "Start a read-only explorer sub-agent on one specific, bounded codebase question and "
        "return at once; its answer arrives later as an agent message before one of your next "
        "model calls.\n\nAt most 3 explorer turns run concurrently; a spawn beyond that fails "
        "with agent_limit_reached. Use it when you have several independent questions whose "
        "intermediate research should stay out of your context, and keep working while it runs. "
        "Do not use it for a single small question, for research your next action depends on, "
        "for work you already investigated, or to delegate the same unresolved question again. "
        "Explorers cannot modify the workspace."
    )


def test_the_prompt_rules_are_the_fixed_text_of_section_5() -> None:
    """§5: ``agent_prompt_rules`` appended to the root system prompt."""
    assert SUB_AGENT_PROMPT_RULES == SPEC_PROMPT_RULES
    assert sub_agent_prompt_rules(3) == SPEC_PROMPT_RULES
    assert sub_agent_prompt_rules(2) == SPEC_PROMPT_RULES.replace("up to 3 ", "up to 2 ")


def test_spawn_success_body_is_the_task_name_json() -> None:
    """§5: ``{"task_name":"<name>"}``."""
    assert spawn_result_body("scan_auth") == '{"task_name":"scan_auth"}'


def test_wait_success_body_reports_delivered_or_timed_out() -> None:
    """§5: ``{"delivered":<bool>,"timed_out":<bool>}``; no message body."""
    assert wait_result_body(delivered=True) == '{"delivered":true,"timed_out":false}'
    assert wait_result_body(delivered=False) == '{"delivered":false,"timed_out":true}'


def test_list_agents_body_is_sorted_by_task_name() -> None:
    """§5: ``[{"task_name","status","started_at"}]`` sorted by task_name."""
    started = datetime(2026, 11, 29, 20, 0, 1, tzinfo=UTC)
    body = list_agents_body(
        [
            AgentListEntry(task_name="zeta", status=AgentStatus.RUNNING, started_at=started),
            AgentListEntry(task_name="alpha", status=AgentStatus.IDLE, started_at=None),
            AgentListEntry(
                task_name="mid",
                status=AgentStatus.CANCELLED,
                started_at=started.astimezone(timezone(timedelta(hours=8))),
            ),
        ]
    )
    assert body == (
        '[{"task_name":"alpha","status":"idle","started_at":null},'
        '{"task_name":"mid","status":"cancelled","started_at":"2026-11-30T04:00:01+08:00"},'
        '{"task_name":"zeta","status":"running","started_at":"2026-11-29T20:00:01+00:00"}]'
    )
    assert list_agents_body([]) == "[]"
    assert [s.value for s in AgentStatus] == ["idle", "running", "completed", "failed", "cancelled"]


def test_followup_and_interrupt_bodies_are_the_fixed_texts() -> None:
    """§5."""
    assert followup_result_body() == "Follow-up task started"
    assert interrupt_result_body() == "Interrupt requested"


def test_error_body_is_code_colon_message() -> None:
    """§5: domain errors are failed results with body ``<code>: <message>``."""
    assert (
        error_body(AgentErrorCode.UNKNOWN_AGENT, "no such agent") == "unknown_agent: no such agent"
    )


def test_the_error_codes_are_the_nine_of_section_5() -> None:
    assert [c.value for c in AgentErrorCode] == [
        "invalid_task_name",
        "duplicate_task_name",
        "unknown_agent",
        "agent_limit_reached",
        "agent_host_unavailable",
        "agent_start_failed",
        "agent_turn_start_failed",
        "agent_inspection_failed",
        "agent_interrupt_failed",
    ]


def test_every_agent_error_has_its_own_stable_code() -> None:
    """DESIGN.md §4.5: one class per code, codes unique, every code has a class."""
    classes = [
        c
        for _, c in inspect.getmembers(agent_errors, inspect.isclass)
        if issubclass(c, AgentError) and c is not AgentError
    ]
    codes = [c.code for c in classes]
    assert len(codes) == len(set(codes))
    assert set(codes) == set(AgentErrorCode)
    for cls in classes:
        assert cls("why").body == f"{cls.code.value}: why"


def test_consecutive_wait_timeouts_reach_the_threshold_and_a_delivery_resets() -> None:
    """§5, session-runtime.md §4: 3 consecutive timeouts → doom loop; delivered resets."""
    streak = WaitTimeoutStreak()
    assert streak.record(delivered=False) is False
    assert streak.record(delivered=False) is False
    assert streak.record(delivered=True) is False
    assert streak.count == 0
    assert streak.record(delivered=False) is False
    assert streak.record(delivered=False) is False
    assert streak.record(delivered=False) is True


def test_followup_args_model_is_frozen() -> None:
    args = FollowupTaskArgs(task_name="scan", message="more")
    with pytest.raises(ValidationError, match="frozen"):
        args.message = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("active", "last", "status"),
    [
        (True, TurnStatus.COMPLETED, AgentStatus.RUNNING),
        (False, None, AgentStatus.IDLE),
        (False, TurnStatus.COMPLETED, AgentStatus.COMPLETED),
        (False, TurnStatus.FAILED, AgentStatus.FAILED),
        (False, TurnStatus.CANCELLED, AgentStatus.CANCELLED),
        (False, TurnStatus.INTERRUPTED, AgentStatus.CANCELLED),
    ],
)
def test_list_agents_status_comes_from_the_child_snapshot(
    active: bool, last: TurnStatus | None, status: AgentStatus
) -> None:
    """§5: ``idle|running|completed|failed|cancelled``."""
    assert agent_status(turn_active=active, last_turn_status=last) is status
