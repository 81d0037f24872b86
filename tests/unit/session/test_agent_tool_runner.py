"""The control-tool runner of a root Turn without a database (multi-agent.md §5; session-runtime.md
§4): the wait timeout streak, cancellation ending a wait, and failures as ``<code>: <message>``
results. The mailbox is a fake whose ``wait`` answers at once, so no test waits 10 s."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Any, cast

from openwork_core.agents.errors import UnknownAgent
from openwork_core.agents.tools import AgentListEntry, AgentToolName
from openwork_core.session.outcome import Cancelled, Failed, FailureCode
from openwork_core.session.runner.agent_tools import (
    NO_HOST_TEXT,
    WAIT_CANCELLED_TEXT,
    AgentToolRunner,
)
from openwork_core.session.runner.cancellation import TurnCancellation
from openwork_core.session.runner.context import TurnContext


class _Mailbox:
    def __init__(self, answers: list[bool | None]) -> None:
        self._answers = deque(answers)
        self.waiting = asyncio.Event()

    async def wait(self, timeout_s: float) -> bool:
        answer = self._answers.popleft()
        if answer is None:  # blocks until cancelled
            self.waiting.set()
            await asyncio.Event().wait()
        assert answer is not None
        return answer


class _Host:
    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.spawned: list[tuple[str, str, str | None]] = []

    async def spawn(self, task_name: str, message: str, *, spawn_span_id: str | None) -> None:
        if self.error is not None:
            raise self.error
        self.spawned.append((task_name, message, spawn_span_id))

    async def followup(self, task_name: str, message: str) -> None:
        raise UnknownAgent(f"no sub-agent named {task_name!r} exists in this session")

    async def interrupt(self, task_name: str) -> None:
        return None

    async def list_agents(self) -> tuple[AgentListEntry, ...]:
        return ()


@dataclass
class _Agent:
    doom_loop_threshold: int = 3


@dataclass
class _Services:
    mailbox: _Mailbox
    agents: _Host | None
    agent: _Agent = field(default_factory=_Agent)


@dataclass
class _Turn:
    services: _Services
    cancellation: TurnCancellation = field(default_factory=TurnCancellation)


def _runner(answers: list[bool | None], host: _Host | None = None) -> tuple[AgentToolRunner, _Turn]:
    turn = _Turn(_Services(_Mailbox(answers), host))
    return AgentToolRunner(cast(TurnContext, cast(Any, turn))), turn


async def test_three_consecutive_wait_timeouts_fail_the_turn_doom_loop() -> None:
    """§5: consecutive timeouts reaching the threshold (3) fail the Turn ``doom_loop``."""
    runner, _ = _runner([False, False, False])
    first = await runner.run(AgentToolName.WAIT_AGENT, "{}", "span")
    second = await runner.run(AgentToolName.WAIT_AGENT, '{"timeout_ms":10000}', "span")
    third = await runner.run(AgentToolName.WAIT_AGENT, "{}", "span")
    assert first.text == '{"delivered":false,"timed_out":true}'
    assert (first.terminal, second.terminal) == (None, None)
    assert third.text == '{"delivered":false,"timed_out":true}'
    assert isinstance(third.terminal, Failed)
    assert third.terminal.code is FailureCode.DOOM_LOOP


async def test_a_delivered_wait_resets_the_timeout_streak() -> None:
    """§5: a wait that delivers resets the streak; waiting again after a timeout works."""
    runner, _ = _runner([False, False, True, False, False])
    outcomes = [await runner.run(AgentToolName.WAIT_AGENT, "{}", "span") for _ in range(5)]
    assert outcomes[2].text == '{"delivered":true,"timed_out":false}'
    assert all(o.terminal is None for o in outcomes)


async def test_cancelling_the_parent_ends_the_wait_and_cancels_the_turn() -> None:
    """§5, session-runtime.md §13: parent cancellation ends ``wait_agent``."""
    runner, turn = _runner([None])
    waiting = asyncio.ensure_future(runner.run(AgentToolName.WAIT_AGENT, "{}", "span"))
    async with asyncio.timeout(5):
        await turn.services.mailbox.waiting.wait()
        turn.cancellation.request()
        result = await waiting
    assert (result.text, result.status, result.terminal) == (
        WAIT_CANCELLED_TEXT,
        "cancelled",
        Cancelled(),
    )


async def test_wait_arguments_outside_the_range_are_an_invalid_tool_input() -> None:
    """§5: 10 000–600 000 ms, else an argument error; the Turn continues."""
    runner, _ = _runner([])
    result = await runner.run(AgentToolName.WAIT_AGENT, '{"timeout_ms":5}', "span")
    assert result.status == "failed"
    assert result.text.startswith("invalid tool input: ")
    assert result.terminal is None


async def test_domain_errors_are_failed_results_with_their_code_and_the_turn_continues() -> None:
    """§5: ``<code>: <message>``; the span id is the spawn span."""
    host = _Host()
    runner, _ = _runner([], host)
    spawned = await runner.run(
        AgentToolName.SPAWN_AGENT, '{"task_name":"scan","message":"look"}', "span-1"
    )
    followup = await runner.run(
        AgentToolName.FOLLOWUP_TASK, '{"task_name":"nope","message":"more"}', "span-2"
    )
    assert (spawned.text, spawned.status) == ('{"task_name":"scan"}', "succeeded")
    assert host.spawned == [("scan", "look", "span-1")]
    assert followup.status == "failed"
    assert followup.text.startswith("unknown_agent: ")
    assert followup.terminal is None


async def test_an_unclassified_host_failure_is_agent_start_failed_for_spawn() -> None:
    """§5: a spawn that fails for another reason is ``agent_start_failed``."""
    runner, _ = _runner([], _Host(RuntimeError("database down")))
    result = await runner.run(
        AgentToolName.SPAWN_AGENT, '{"task_name":"scan","message":"look"}', "span"
    )
    assert result.text == "agent_start_failed: database down"


async def test_without_a_host_the_control_tools_answer_agent_host_unavailable() -> None:
    """§2: the host is gone → ``agent_host_unavailable``."""
    runner, _ = _runner([], None)
    result = await runner.run(AgentToolName.LIST_AGENTS, "{}", "span")
    assert result.text == f"agent_host_unavailable: {NO_HOST_TEXT}"
