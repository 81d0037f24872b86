"""The sub-agent control tools of a root session's Turn (multi-agent.md §5; session-runtime.md §4,
§5 step 7). Executed without the sandbox; domain failures are failed results ``<code>: <message>``
and the parent Turn continues.

``wait_agent`` waits on the session's own mailbox and is raced against the Turn's cancel signal
(cancelling the parent ends the wait and the Turn). Consecutive timeouts reaching the agent's
``doom_loop_threshold`` fail the Turn ``doom_loop``; a delivered wait resets the streak. The
identical-call doom-loop count never sees ``wait_agent`` (``ToolCallRunner``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

import structlog

from openwork_chat_state.messages import ToolResultState
from openwork_core.agents.errors import (
    AgentError,
    AgentHostUnavailable,
    AgentInspectionFailed,
    AgentInterruptFailed,
    AgentStartFailed,
    AgentTurnStartFailed,
)
from openwork_core.agents.tools import (
    AgentToolArgs,
    AgentToolName,
    FollowupTaskArgs,
    InterruptAgentArgs,
    ListAgentsArgs,
    SpawnAgentArgs,
    WaitAgentArgs,
    WaitTimeoutStreak,
    followup_result_body,
    interrupt_result_body,
    list_agents_body,
    parse_agent_tool_args,
    spawn_result_body,
    wait_result_body,
)
from openwork_core.ids import SpanId
from openwork_core.session.outcome import Cancelled, Failed, FailureCode, TurnCancelled, TurnOutcome
from openwork_core.session.runner.context import AgentHost, TurnContext
from openwork_tools.results import ToolStatus

log = structlog.get_logger(__name__)

WAIT_CANCELLED_TEXT = "wait_agent was interrupted because the turn was cancelled"
NO_HOST_TEXT = "this session has no sub-agent host"

_STATE = {
    ToolStatus.SUCCEEDED: ToolResultState.SUCCESS,
    ToolStatus.FAILED: ToolResultState.ERROR,
    ToolStatus.CANCELLED: ToolResultState.INTERRUPTED,
}
"""A control tool's result block state by its status (it is never denied or unknown)."""

_UNEXPECTED: dict[AgentToolName, type[AgentError]] = {
    AgentToolName.SPAWN_AGENT: AgentStartFailed,
    AgentToolName.FOLLOWUP_TASK: AgentTurnStartFailed,
    AgentToolName.INTERRUPT_AGENT: AgentInterruptFailed,
    AgentToolName.LIST_AGENTS: AgentInspectionFailed,
    AgentToolName.WAIT_AGENT: AgentInspectionFailed,
}
"""The code of a failure the host did not classify (a bug or an I/O error), per tool."""


@dataclass(frozen=True, slots=True)
class AgentToolResult:
    text: str
    status: ToolStatus
    terminal: TurnOutcome | None = None

    @property
    def state(self) -> ToolResultState:
        return _STATE[self.status]


def wait_doom_loop_message(threshold: int) -> str:
    return f"wait_agent timed out {threshold} times in a row without a delivered message"


class AgentToolRunner:
    """One Turn's control-tool state: the ``wait_agent`` timeout streak."""

    def __init__(self, turn: TurnContext) -> None:
        self._turn = turn
        self._waits = WaitTimeoutStreak(turn.services.agent.doom_loop_threshold)

    async def run(self, tool: AgentToolName, input_json: str, span: SpanId) -> AgentToolResult:
        args = parse_agent_tool_args(tool, input_json)
        if isinstance(args, str):
            return AgentToolResult(args, ToolStatus.FAILED)
        if isinstance(args, WaitAgentArgs):
            return await self._wait(args)
        host = self._turn.services.agents
        try:
            if host is None:
                raise AgentHostUnavailable(NO_HOST_TEXT)
            body = await _call(host, args, span)
        except AgentError as exc:
            return AgentToolResult(exc.body, ToolStatus.FAILED)
        except Exception as exc:  # the host classifies what it knows; anything else is logged
            log.exception("agent_tool.failed", tool=tool.value)
            return AgentToolResult(_UNEXPECTED[tool](str(exc) or repr(exc)).body, ToolStatus.FAILED)
        return AgentToolResult(body, ToolStatus.SUCCEEDED)

    async def _wait(self, args: WaitAgentArgs) -> AgentToolResult:
        turn = self._turn
        try:
            async with turn.cancellation.scope():
                delivered = await turn.services.mailbox.wait(args.timeout_s)
        except TurnCancelled:
            return AgentToolResult(WAIT_CANCELLED_TEXT, ToolStatus.CANCELLED, Cancelled())
        body = wait_result_body(delivered=delivered)
        if self._waits.record(delivered=delivered):
            message = wait_doom_loop_message(self._waits.threshold)
            return AgentToolResult(
                body, ToolStatus.SUCCEEDED, Failed(FailureCode.DOOM_LOOP, message)
            )
        return AgentToolResult(body, ToolStatus.SUCCEEDED)


async def _call(host: AgentHost, args: AgentToolArgs, span: SpanId) -> str:
    match args:
        case SpawnAgentArgs(task_name=name, message=text):
            await host.spawn(name, text, spawn_span_id=span)
            return spawn_result_body(name)
        case FollowupTaskArgs(task_name=name, message=text):
            await host.followup(name, text)
            return followup_result_body()
        case InterruptAgentArgs(task_name=name):
            await host.interrupt(name)
            return interrupt_result_body()
        case ListAgentsArgs():
            return list_agents_body(await host.list_agents())
        case WaitAgentArgs():
            raise AssertionError("wait_agent runs on the mailbox, not the host")
        case _:
            assert_never(args)
