"""The five sub-agent control tools of root sessions (multi-agent.md §5).

Definitions (schemas generated from the argument models that parse the input), argument parsing,
success bodies and the fixed system-prompt rules. Pure: ``AgentControl``, the mailbox and the host
do the work; the runner dispatches ``ResolvedTurnTool::Agent`` here.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, TypeAlias, assert_never

import orjson
from pydantic import BaseModel, ConfigDict, Field, JsonValue, StringConstraints

from openwork_chat_state.messages import JsonObject, ToolDefinition
from openwork_core.agents.control import DEFAULT_MAX_ACTIVE_SUB_AGENT_TURNS, TASK_NAME_PATTERN
from openwork_core.storage.records import TurnStatus
from openwork_tools.schema import parse_input


class AgentToolName(enum.StrEnum):
    SPAWN_AGENT = "spawn_agent"
    WAIT_AGENT = "wait_agent"
    LIST_AGENTS = "list_agents"
    FOLLOWUP_TASK = "followup_task"
    INTERRUPT_AGENT = "interrupt_agent"


AGENT_TOOL_NAMES: tuple[str, ...] = tuple(name.value for name in AgentToolName)
"""In the spec's order: spawn_agent, wait_agent, list_agents, followup_task, interrupt_agent."""

WAIT_TIMEOUT_DEFAULT_MS = 60_000
WAIT_TIMEOUT_MIN_MS = 10_000
WAIT_TIMEOUT_MAX_MS = 600_000

FOLLOWUP_STARTED_TEXT = "Follow-up task started"
INTERRUPT_REQUESTED_TEXT = "Interrupt requested"

# -- argument models ---------------------------------------------------------------------------

TASK_NAME_DESCRIPTION = (
    "Short identifier of the explorer within this session: lowercase letters, digits and "
    "underscores, starting with a letter, at most 48 characters."
)
SPAWN_MESSAGE_DESCRIPTION = (
    "The explorer's complete, self-contained assignment: the question, what you already know, "
    "and what its answer must contain. It does not see your conversation."
)
FOLLOWUP_MESSAGE_DESCRIPTION = (
    "The next assignment for this explorer; it keeps its earlier context."
)
TIMEOUT_DESCRIPTION = (
    f"How long to wait in milliseconds, {WAIT_TIMEOUT_MIN_MS}-{WAIT_TIMEOUT_MAX_MS}; "
    f"default {WAIT_TIMEOUT_DEFAULT_MS}."
)

TaskName: TypeAlias = Annotated[
    str, StringConstraints(pattern=TASK_NAME_PATTERN), Field(description=TASK_NAME_DESCRIPTION)
]
NON_BLANK_PATTERN = r"\S"
"""Unanchored: the message must contain a non-whitespace character."""


class _AgentArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class SpawnAgentArgs(_AgentArgs):
    task_name: TaskName
    message: Annotated[
        str,
        StringConstraints(min_length=1, pattern=NON_BLANK_PATTERN),
        Field(description=SPAWN_MESSAGE_DESCRIPTION),
    ]


class WaitAgentArgs(_AgentArgs):
    timeout_ms: int = Field(
        default=WAIT_TIMEOUT_DEFAULT_MS,
        ge=WAIT_TIMEOUT_MIN_MS,
        le=WAIT_TIMEOUT_MAX_MS,
        description=TIMEOUT_DESCRIPTION,
    )

    @property
    def timeout_s(self) -> float:
        return self.timeout_ms / 1000


class ListAgentsArgs(_AgentArgs):
    pass


class FollowupTaskArgs(_AgentArgs):
    task_name: TaskName
    message: Annotated[
        str,
        StringConstraints(min_length=1, pattern=NON_BLANK_PATTERN),
        Field(description=FOLLOWUP_MESSAGE_DESCRIPTION),
    ]


class InterruptAgentArgs(_AgentArgs):
    task_name: TaskName


AgentToolArgs: TypeAlias = (
    SpawnAgentArgs | WaitAgentArgs | ListAgentsArgs | FollowupTaskArgs | InterruptAgentArgs
)

_ARGS: dict[AgentToolName, type[_AgentArgs]] = {
    AgentToolName.SPAWN_AGENT: SpawnAgentArgs,
    AgentToolName.WAIT_AGENT: WaitAgentArgs,
    AgentToolName.LIST_AGENTS: ListAgentsArgs,
    AgentToolName.FOLLOWUP_TASK: FollowupTaskArgs,
    AgentToolName.INTERRUPT_AGENT: InterruptAgentArgs,
}


def parse_agent_tool_args(name: AgentToolName, input_json: str) -> AgentToolArgs | str:
    """The typed arguments, or the model-visible ``invalid tool input: …`` text (tools.md §2)."""
    parsed = parse_input(_ARGS[name], input_json)
    if isinstance(parsed, str):
        return parsed
    assert isinstance(
        parsed,
        SpawnAgentArgs | WaitAgentArgs | ListAgentsArgs | FollowupTaskArgs | InterruptAgentArgs,
    )
    return parsed


def _strip_titles(node: JsonValue) -> JsonValue:
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: JsonObject = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {prop: _strip_titles(sub) for prop, sub in value.items()}
        else:
            out[key] = _strip_titles(value)
    return out


def agent_tool_parameters(name: AgentToolName) -> JsonObject:
    """The argument model's JSON schema without ``$schema``/``title`` (a fresh object)."""
    raw = _ARGS[name].model_json_schema()
    raw.pop("$schema", None)
    schema = _strip_titles(raw)
    assert isinstance(schema, dict)
    schema.setdefault("properties", {})
    return schema


# -- descriptions ------------------------------------------------------------------------------

_SPAWN_DESCRIPTION = """Start a read-only explorer sub-agent on one specific, bounded codebase question and return at once; its answer arrives later as an agent message before one of your next model calls.

At most {n} explorer turns run concurrently; a spawn beyond that fails with agent_limit_reached. Use it when you have several independent questions whose intermediate research should stay out of your context, and keep working while it runs. Do not use it for a single small question, for research your next action depends on, for work you already investigated, or to delegate the same unresolved question again. Explorers cannot modify the workspace."""

_WAIT_DESCRIPTION = """Wait until any sub-agent message arrives in this session's mailbox, or until the timeout; returns at once if one is already queued. The result only says whether a message was delivered; its content appears before your next model call.

At most {n} explorer turns run concurrently. Use it only when waiting is the next useful action; do not use it while you still have useful work of your own, and do not poll it repeatedly: consecutive timeouts end your turn."""

_LIST_DESCRIPTION = """List this session's explorer sub-agents with their task name, status (idle, running, completed, failed, cancelled) and start time, sorted by task name.

At most {n} explorer turns run concurrently. Use it to see which explorers are running or idle before a followup_task or interrupt_agent; do not use it to wait for results (use wait_agent)."""

_FOLLOWUP_DESCRIPTION = """Start a new turn on an existing, idle explorer, which keeps the context of its earlier work; its answer arrives later as an agent message.

At most {n} explorer turns run concurrently; beyond that the call fails with agent_limit_reached, and it fails with agent_turn_start_failed while the explorer is still running. Use it when the explorer's existing context helps with the next question. Do not use it for an unrelated question (spawn a new explorer) or to repeat a question it could not answer."""

_INTERRUPT_DESCRIPTION = """Cancel the current turn of an explorer; it then reports that it was interrupted and becomes idle, freeing one of the {n} concurrent explorer turns.

Use it when an explorer's work is no longer needed or is going in the wrong direction. Do not use it on an explorer that is not running (agent_interrupt_failed) or merely because it is slow while its answer is still needed."""

_DESCRIPTIONS: dict[AgentToolName, str] = {
    AgentToolName.SPAWN_AGENT: _SPAWN_DESCRIPTION,
    AgentToolName.WAIT_AGENT: _WAIT_DESCRIPTION,
    AgentToolName.LIST_AGENTS: _LIST_DESCRIPTION,
    AgentToolName.FOLLOWUP_TASK: _FOLLOWUP_DESCRIPTION,
    AgentToolName.INTERRUPT_AGENT: _INTERRUPT_DESCRIPTION,
}


def agent_tool_description(
    name: AgentToolName, max_active_turns: int = DEFAULT_MAX_ACTIVE_SUB_AGENT_TURNS
) -> str:
    return _DESCRIPTIONS[name].format(n=max_active_turns)


@functools.cache
def agent_tool_definition(
    name: AgentToolName, max_active_turns: int = DEFAULT_MAX_ACTIVE_SUB_AGENT_TURNS
) -> ToolDefinition:
    """Built once per process for each (name, limit)."""
    return ToolDefinition(
        name=name.value,
        description=agent_tool_description(name, max_active_turns),
        parameters=agent_tool_parameters(name),
    )


def agent_tool_definitions(
    max_active_turns: int = DEFAULT_MAX_ACTIVE_SUB_AGENT_TURNS,
) -> tuple[ToolDefinition, ...]:
    """The five definitions in ``AGENT_TOOL_NAMES`` order (root surfaces only)."""
    return tuple(agent_tool_definition(name, max_active_turns) for name in AgentToolName)


# -- the system-prompt rules -------------------------------------------------------------------

_PROMPT_RULES_TEMPLATE = """## Sub-agent delegation

You can run up to {n} read-only explorer turns concurrently. Delegate when you have multiple specific, bounded codebase questions that can proceed independently, especially when their intermediate research should stay out of the parent context. Keep doing useful parent-side work while explorers run. Handle a single small question locally. Keep critical-path research local when your next action depends on its result. Do not delegate work you already investigated or repeatedly delegate the same unresolved question. Use wait_agent only when waiting is the next useful action; delivered messages appear before the next model call. Reuse an idle explorer with followup_task when its existing context helps."""


def sub_agent_prompt_rules(max_active_turns: int = DEFAULT_MAX_ACTIVE_SUB_AGENT_TURNS) -> str:
    """``agent_prompt_rules`` appended to a root session's system prompt (§5)."""
    return _PROMPT_RULES_TEMPLATE.format(n=max_active_turns)


SUB_AGENT_PROMPT_RULES = sub_agent_prompt_rules()

# -- success bodies ----------------------------------------------------------------------------


class AgentStatus(enum.StrEnum):
    """``list_agents`` status, from the child's snapshot (§5)."""

    IDLE = "idle"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


def agent_status(*, turn_active: bool, last_turn_status: TurnStatus | None) -> AgentStatus:
    """A child's ``list_agents`` status from its snapshot: ``running`` while a Turn is active,
    ``idle`` before its first Turn, else its last Turn's outcome. Reading: a Turn ``interrupted``
    by a restart shows as ``cancelled`` (the five statuses of §5 have no ``interrupted``)."""
    if turn_active:
        return AgentStatus.RUNNING
    match last_turn_status:
        case None:
            return AgentStatus.IDLE
        case TurnStatus.RUNNING:
            return AgentStatus.RUNNING
        case TurnStatus.COMPLETED:
            return AgentStatus.COMPLETED
        case TurnStatus.FAILED:
            return AgentStatus.FAILED
        case TurnStatus.CANCELLED | TurnStatus.INTERRUPTED:
            return AgentStatus.CANCELLED
        case _:
            assert_never(last_turn_status)


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentListEntry:
    task_name: str
    status: AgentStatus
    started_at: datetime | None


def _json(value: JsonValue) -> str:
    return orjson.dumps(value).decode()


def spawn_result_body(task_name: str) -> str:
    """``{"task_name":"<name>"}``"""
    return _json({"task_name": task_name})


def wait_result_body(*, delivered: bool) -> str:
    """``{"delivered":<bool>,"timed_out":<bool>}``; a wait that did not deliver timed out."""
    return _json({"delivered": delivered, "timed_out": not delivered})


def list_agents_body(entries: Iterable[AgentListEntry]) -> str:
    """``[{"task_name","status","started_at"}]`` sorted by task name; ``started_at`` is ISO 8601
    with its offset, or ``null`` for a child that has not started a Turn."""
    ordered = sorted(entries, key=lambda e: e.task_name)
    return _json(
        [
            {
                "task_name": e.task_name,
                "status": e.status.value,
                "started_at": None if e.started_at is None else e.started_at.isoformat(),
            }
            for e in ordered
        ]
    )


def followup_result_body() -> str:
    return FOLLOWUP_STARTED_TEXT


def interrupt_result_body() -> str:
    return INTERRUPT_REQUESTED_TEXT


class WaitTimeoutStreak:
    """Consecutive ``wait_agent`` timeouts in one parent Turn (§5, session-runtime.md §4):
    reaching the threshold fails the Turn ``doom_loop``; a delivered wait resets the streak."""

    __slots__ = ("_count", "threshold")

    def __init__(self, threshold: int = 3) -> None:
        self.threshold = threshold
        self._count = 0

    @property
    def count(self) -> int:
        return self._count

    def record(self, *, delivered: bool) -> bool:
        """Record one wait; ``True`` when the timeouts now reach the threshold."""
        self._count = 0 if delivered else self._count + 1
        return self._count >= self.threshold
