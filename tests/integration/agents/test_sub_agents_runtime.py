"""Sub-agents in real turns on PostgreSQL (multi-agent.md §2–§8, §10; session-runtime.md §2, §4
step 3b; context-window.md §5): the five control tools on root sessions, explorer children on the
same run loop, terminal delivery through the parent's mailbox, reconciliation after a restart.

One ``ScriptedModel`` serves parent and children; ``_Router`` sends each request to the script of
its session (a child is recognised by the explorer prompt, and named by its first user text)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import TypeAlias

import orjson
import pytest

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import Role, TextBlock, ToolResultBlock
from openwork_core.agents.definitions import EXPLORER_AGENT_PROMPT
from openwork_core.agents.messages import (
    LIVE_INTERRUPTED_BODY,
    RESTART_INTERRUPTED_BODY,
    AgentMessage,
    AgentMessageKind,
    agent_message_id,
    render_agent_message,
)
from openwork_core.agents.tools import AGENT_TOOL_NAMES, sub_agent_prompt_rules
from openwork_core.daemon.errors import response_for
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse, scripted_events
from openwork_core.models.port import ModelEvent, ModelRequest
from openwork_core.session.input import TextInput
from openwork_core.session.outcome import Cancelled, Completed
from openwork_core.session.sub_agent_host import SubAgentModeFixed
from openwork_core.storage.codec import decode_message
from openwork_core.storage.postgres.agents import AgentStore
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import TurnStatus
from openwork_tools.modes import SandboxMode
from openwork_tools.sandbox.probe import probe_sandbox
from tests.support import store_rows
from tests.support.runtime import Runtime, runtime

Step: TypeAlias = ScriptedResponse | Callable[[ModelRequest], AsyncIterator[ModelEvent]]
BOUND_S = 20


def _text(message_content: object) -> str:
    assert isinstance(message_content, tuple)
    return "".join(b.text for b in message_content if isinstance(b, TextBlock))


def _system(request: ModelRequest) -> str:
    return _text(request.messages[0].content)


def _user_texts(request: ModelRequest) -> list[str]:
    return [_text(m.content) for m in request.messages if m.role is Role.USER]


def _is_child(request: ModelRequest) -> bool:
    return EXPLORER_AGENT_PROMPT in _system(request)


class _Router:
    """Per-session scripts behind one ``ScriptedModel``."""

    def __init__(self) -> None:
        self.parent: deque[Step] = deque()
        self.children: dict[str, deque[Step]] = {}
        self.parent_requests: list[ModelRequest] = []
        self.child_requests: dict[str, list[ModelRequest]] = {}

    def model(self, calls: int = 40) -> ScriptedModel:
        return ScriptedModel([self._step] * calls)

    def child(self, assignment: str, *steps: Step) -> None:
        self.children.setdefault(assignment, deque()).extend(steps)

    async def _step(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if _is_child(request):
            key = _user_texts(request)[0]
            self.child_requests.setdefault(key, []).append(request)
            step = self.children[key].popleft()
        else:
            self.parent_requests.append(request)
            step = self.parent.popleft()
        if isinstance(step, ScriptedResponse):
            for event in scripted_events(step):
                yield event
            return
        async for event in step(request):
            yield event


def _held(release: asyncio.Event, then: ScriptedResponse) -> Step:
    """A model step that waits (bounded) for ``release`` before answering."""

    async def step(_request: ModelRequest) -> AsyncIterator[ModelEvent]:
        async with asyncio.timeout(BOUND_S):
            await release.wait()
        for event in scripted_events(then):
            yield event

    return step


def _after(action: Callable[[], None], then: ScriptedResponse) -> Step:
    async def step(_request: ModelRequest) -> AsyncIterator[ModelEvent]:
        action()
        for event in scripted_events(then):
            yield event

    return step


def _call(call_id: str, name: str, args: Mapping[str, object] | None = None) -> ScriptedResponse:
    return ScriptedResponse(tool_calls=((call_id, name, orjson.dumps(args or {}).decode()),))


async def _results(store: PostgresStore, sid: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for row in await store_rows.session_messages(store.pool, sid):
        for block in decode_message(row).tool_results:
            out[block.id] = "".join(b.text for b in block.output if isinstance(b, TextBlock))
    return out


async def _result_blocks(store: PostgresStore, sid: str) -> dict[str, ToolResultBlock]:
    return {
        b.id: b
        for row in await store_rows.session_messages(store.pool, sid)
        for b in decode_message(row).tool_results
    }


async def _agent_messages(store: PostgresStore, sid: str) -> list[tuple[str, str]]:
    return [
        (row.id, _text(decode_message(row).content))
        for row in await store_rows.session_messages(store.pool, sid)
        if row.kind is MessageKind.AGENT_MESSAGE
    ]


async def _child_finishes(rt: Runtime, parent: str, count: int, start: Awaitable[object]) -> None:
    """Run ``start`` and wait (bounded) until ``count`` child turns have finished."""
    subscription = rt.core.global_updates.subscribe()
    try:
        await start
        seen = 0
        async with asyncio.timeout(BOUND_S):
            while seen < count:
                envelope = (await subscription.queue.get()).envelope
                if envelope.session_id != parent and envelope.update.type == "turn_finished":
                    seen += 1
    finally:
        subscription.close()


async def _only_child(rt: Runtime, parent: str) -> tuple[str, str]:
    (child,) = await rt.core.desktop.children(parent)
    return child.session_id, child.task_name


async def test_spawn_starts_an_explorer_turn_and_its_final_answer_reaches_the_parent_before_the_next_model_call(
    store: PostgresStore, tmp_path: Path
) -> None:
    """multi-agent.md §1, §4, §5, §6, §10: the root advertises the five tools and carries the
    rules; the child is an explorer without control tools; spawn returns the task name; wait
    delivers; the final answer is a user-role agent_message drained before the next model call,
    stored under ``agent-msg:{child}:{turn}:final_answer`` once."""
    router = _Router()
    release = asyncio.Event()
    router.parent.extend(
        [
            _call("s1", "spawn_agent", {"task_name": "scan", "message": "find the parser"}),
            _after(release.set, _call("w1", "wait_agent")),
            ScriptedResponse(text="parent done"),
            ScriptedResponse(text="second turn done"),
        ]
    )
    router.child("find the parser", _held(release, ScriptedResponse(text="parser.py:10")))
    model = router.model()
    async with runtime(store, tmp_path, model) as rt:
        parent = await rt.new_session()
        _, updates = await rt.run_turn(parent, "delegate")
        assert updates[-1].update.outcome == Completed("parent done")  # type: ignore[union-attr]
        child_id, task = await _only_child(rt, parent)
        child_turn = (await store_rows.session_messages(rt.core.store.pool, child_id))[0].turn_id
        assert child_turn is not None
        assert (await rt.core.turn_view(child_id, child_turn)).final_text == "parser.py:10"
        await rt.run_turn(parent, "again")
        child = await rt.core.get_session(child_id)
        listed = [s.id for s in await rt.core.list_sessions()]

    first, _, third, fourth = router.parent_requests
    assert [t.name for t in first.tools][-6:] == ["update_plan", *AGENT_TOOL_NAMES]
    assert _system(first).endswith("\n\n" + sub_agent_prompt_rules(3))
    (child_request,) = router.child_requests["find the parser"]
    assert [t.name for t in child_request.tools] == ["read", "grep", "glob", "list", "bash"]
    assert "Sub-agent delegation" not in _system(child_request)
    assert (child.agent, child.sandbox_mode, task) == ("explorer", SandboxMode.ACCEPT_EDITS, "scan")
    assert child.working_directory == str(rt.workspace.resolve())
    assert child_id not in listed and parent in listed

    results = await _results(store, parent)
    assert results["s1"] == '{"task_name":"scan"}'
    assert results["w1"] == '{"delivered":true,"timed_out":false}'
    envelope = render_agent_message(
        AgentMessage(
            id="",
            task_name="scan",
            kind=AgentMessageKind.FINAL_ANSWER,
            body="parser.py:10",
        )
    )
    assert third.messages[-1].role is Role.USER
    assert _user_texts(third)[-1] == envelope
    assert _user_texts(fourth).count(envelope) == 1
    message_id = agent_message_id(child_id, child_turn, AgentMessageKind.FINAL_ANSWER)
    assert await _agent_messages(store, parent) == [(message_id, envelope)]
    model.assert_invariants()


async def test_a_duplicate_task_name_is_a_failed_result_and_the_parent_turn_continues(
    store: PostgresStore, tmp_path: Path
) -> None:
    """multi-agent.md §3, §5: the second spawn under one name fails ``duplicate_task_name``."""
    router = _Router()
    spawn = {"task_name": "scan", "message": "look"}
    router.parent.extend(
        [
            ScriptedResponse(
                tool_calls=(
                    ("s1", "spawn_agent", orjson.dumps(spawn).decode()),
                    ("s2", "spawn_agent", orjson.dumps(spawn).decode()),
                )
            ),
            ScriptedResponse(text="continued"),
        ]
    )
    router.child("look", ScriptedResponse(text="seen"))
    async with runtime(store, tmp_path, router.model()) as rt:
        parent = await rt.new_session()
        await _child_finishes(rt, parent, 1, rt.run_turn(parent, "go"))
        children = await rt.core.desktop.children(parent)
    results = await _results(store, parent)
    assert results["s1"] == '{"task_name":"scan"}'
    assert results["s2"].startswith("duplicate_task_name: ")
    assert len(router.parent_requests) == 2
    assert [c.task_name for c in children] == ["scan"]


async def test_a_fourth_concurrent_spawn_is_refused_with_agent_limit_reached(
    store: PostgresStore, tmp_path: Path
) -> None:
    """multi-agent.md §7, §10: three explorer turns run at once; the fourth spawn fails
    ``agent_limit_reached``, frees its name and writes no row."""
    router = _Router()
    release = asyncio.Event()
    calls = tuple(
        (f"s{i}", "spawn_agent", orjson.dumps({"task_name": n, "message": f"q {n}"}).decode())
        for i, n in enumerate(("a", "b", "c", "d"))
    )
    router.parent.extend([ScriptedResponse(tool_calls=calls), ScriptedResponse(text="ok")])
    for name in ("a", "b", "c"):
        router.child(f"q {name}", _held(release, ScriptedResponse(text=name)))
    async with runtime(store, tmp_path, router.model()) as rt:
        parent = await rt.new_session()
        await rt.run_turn(parent, "fan out")
        children = await rt.core.desktop.children(parent)
        await _child_finishes(rt, parent, 3, _set(release))
    results = await _results(store, parent)
    assert [results[f"s{i}"] for i in range(3)] == [f'{{"task_name":"{n}"}}' for n in "abc"]
    assert results["s3"].startswith("agent_limit_reached: ")
    assert sorted(c.task_name for c in children) == ["a", "b", "c"]


async def _set(event: asyncio.Event) -> None:
    event.set()


async def test_interrupt_agent_cancels_a_held_child_and_the_parent_hears_interrupted_once(
    store: PostgresStore, tmp_path: Path
) -> None:
    """multi-agent.md §5, §6, §8: interrupt cancels the child's Turn; its live ``interrupted``
    message is drained before a later parent model call (this Turn's or, once the parent is
    idle, the next user Turn's) and is not reported again as ``failed`` by reconciliation."""
    router = _Router()
    never = asyncio.Event()
    router.parent.extend(
        [
            _call("s1", "spawn_agent", {"task_name": "slow", "message": "take long"}),
            _call("i1", "interrupt_agent", {"task_name": "slow"}),
            _call("i2", "interrupt_agent", {"task_name": "ghost"}),
            ScriptedResponse(text="stopped"),
            ScriptedResponse(text="heard"),
        ]
    )
    router.child("take long", _held(never, ScriptedResponse(text="never")))
    async with runtime(store, tmp_path, router.model()) as rt:
        parent = await rt.new_session()
        await _child_finishes(rt, parent, 1, rt.run_turn(parent, "go"))
        child_id, _ = await _only_child(rt, parent)
        await rt.run_turn(parent, "next")
        (child_turn,) = {m.turn_id for m in await store_rows.session_messages(store.pool, child_id)}
        assert child_turn is not None
        view = await rt.core.turn_view(child_id, child_turn)
    assert view.status is TurnStatus.CANCELLED
    results = await _results(store, parent)
    assert results["i1"] == "Interrupt requested"
    assert results["i2"].startswith("unknown_agent: ")
    envelope = render_agent_message(
        AgentMessage(
            id="", task_name="slow", kind=AgentMessageKind.INTERRUPTED, body=LIVE_INTERRUPTED_BODY
        )
    )
    message_id = agent_message_id(child_id, child_turn, AgentMessageKind.INTERRUPTED)
    assert await _agent_messages(store, parent) == [(message_id, envelope)]
    assert _user_texts(router.parent_requests[-1]).count(envelope) == 1


async def test_followup_on_a_running_child_fails_and_an_idle_child_takes_a_followup(
    store: PostgresStore, tmp_path: Path
) -> None:
    """multi-agent.md §5, §10: ``followup_task`` on a running child → ``agent_turn_start_failed``;
    ``list_agents`` shows it running; once idle, a follow-up starts a new Turn in its context."""
    router = _Router()
    release = asyncio.Event()
    router.parent.extend(
        [
            _call("s1", "spawn_agent", {"task_name": "scan", "message": "first question"}),
            _call("f1", "followup_task", {"task_name": "scan", "message": "too early"}),
            _call("l1", "list_agents"),
            ScriptedResponse(text="later"),
            _call("f2", "followup_task", {"task_name": "scan", "message": "second question"}),
            ScriptedResponse(text="done"),
        ]
    )
    router.child(
        "first question",
        _held(release, ScriptedResponse(text="answer one")),
        ScriptedResponse(text="answer two"),
    )
    async with runtime(store, tmp_path, router.model()) as rt:
        parent = await rt.new_session()
        await rt.run_turn(parent, "go")
        await _child_finishes(rt, parent, 1, _set(release))
        await _child_finishes(rt, parent, 1, rt.run_turn(parent, "follow up"))
    results = await _results(store, parent)
    assert results["f1"].startswith("agent_turn_start_failed: ")
    (entry,) = orjson.loads(results["l1"])
    assert (entry["task_name"], entry["status"]) == ("scan", "running")
    assert results["f2"] == "Follow-up task started"
    _first, second = router.child_requests["first question"]
    assert "second question" in _user_texts(second)
    assert "answer one" in [_text(m.content) for m in second.messages if m.role is Role.ASSISTANT]


async def test_cancelling_the_parent_ends_its_wait_and_the_turn_is_cancelled(
    store: PostgresStore, tmp_path: Path
) -> None:
    """multi-agent.md §5, session-runtime.md §13: cancellation interrupts ``wait_agent``."""
    router = _Router()
    router.parent.append(_call("w1", "wait_agent", {"timeout_ms": 600_000}))
    async with runtime(store, tmp_path, router.model()) as rt:
        parent = await rt.new_session()
        _replay, subscription = await rt.core.subscribe(parent, None)
        try:
            accepted = await rt.core.start_turn(
                parent, client_request_id="wait", inputs=[TextInput(text="wait")]
            )
            async with asyncio.timeout(BOUND_S):
                while True:
                    envelope = await subscription.queue.get()
                    update = envelope.update
                    if update.type == "tool_call_started":
                        await rt.core.cancel_turn(parent, accepted.turn_id)
                    if update.type == "turn_finished":
                        assert update.outcome == Cancelled()
                        break
        finally:
            subscription.close()
    (block,) = (await _result_blocks(store, parent)).values()
    assert block.state.value == "interrupted"


async def test_set_permission_mode_on_a_child_is_refused_with_sub_agent_mode_fixed(
    store: PostgresStore, tmp_path: Path
) -> None:
    """permissions-sandbox.md §1, session-runtime.md §2: a child keeps its snapshotted mode;
    multi-agent.md §5: interrupting an idle child fails ``agent_interrupt_failed``."""
    router = _Router()
    router.parent.extend(
        [
            _call("s1", "spawn_agent", {"task_name": "scan", "message": "look"}),
            ScriptedResponse(text="ok"),
            _call("i1", "interrupt_agent", {"task_name": "scan"}),
            ScriptedResponse(text="ok again"),
        ]
    )
    router.child("look", ScriptedResponse(text="seen"))
    async with runtime(store, tmp_path, router.model()) as rt:
        parent = await rt.new_session()
        await _child_finishes(rt, parent, 1, rt.run_turn(parent, "go"))
        child_id, _ = await _only_child(rt, parent)
        with pytest.raises(SubAgentModeFixed) as caught:
            await rt.core.set_permission_mode(child_id, SandboxMode.AUTO)
        assert (await rt.core.get_session(child_id)).sandbox_mode is SandboxMode.ACCEPT_EDITS
        await rt.run_turn(parent, "stop it")
    assert (await _results(store, parent))["i1"].startswith("agent_interrupt_failed: ")
    assert caught.value.code == "sub_agent_mode_fixed"
    assert str(caught.value) == (
        f"A sub-agent keeps the sandbox mode it was started with: {child_id}"
    )
    assert response_for(caught.value).status_code == 409


async def test_after_a_restart_reconciliation_delivers_an_interrupted_child_once_on_the_next_turn(
    store: PostgresStore, tmp_path: Path
) -> None:
    """multi-agent.md §8, §10: a child Turn marked ``interrupted`` at startup is reported with the
    fixed restart body before the parent's next model call, exactly once, without creating a
    parent Turn; the restored child can still be listed."""
    router = _Router()
    never = asyncio.Event()
    router.parent.extend(
        [
            _call("s1", "spawn_agent", {"task_name": "scan", "message": "long look"}),
            ScriptedResponse(text="left running"),
        ]
    )
    router.child("long look", _held(never, ScriptedResponse(text="never")))
    model = router.model()
    async with runtime(store, tmp_path, model) as rt:
        parent = await rt.new_session()
        await rt.run_turn(parent, "go")
        await model.wait_for_requests(3, BOUND_S)
        child_id, _ = await _only_child(rt, parent)
    # the crash: the child's Turn never got its terminal write
    child_turn = await store.pool.fetchval("SELECT id FROM turns WHERE session_id = $1", child_id)
    await store.pool.execute(
        "UPDATE turns SET status = 'running', ended_at = NULL WHERE id = $1", child_turn
    )

    after = _Router()
    after.parent.extend(
        [_call("l1", "list_agents"), ScriptedResponse(text="noted"), ScriptedResponse(text="fine")]
    )
    async with runtime(store, tmp_path, after.model()) as rt:
        await rt.run_turn(parent, "after restart")
        await rt.run_turn(parent, "once more")
        turns = await store.pool.fetchval(
            "SELECT count(*) FROM turns WHERE session_id = $1", parent
        )
    envelope = render_agent_message(
        AgentMessage(
            id="",
            task_name="scan",
            kind=AgentMessageKind.INTERRUPTED,
            body=RESTART_INTERRUPTED_BODY,
        )
    )
    message_id = agent_message_id(child_id, child_turn, AgentMessageKind.INTERRUPTED)
    assert await _agent_messages(store, parent) == [(message_id, envelope)]
    first, _, third = after.parent_requests
    assert _user_texts(first).count(envelope) == 1
    assert _user_texts(third).count(envelope) == 1
    (entry,) = orjson.loads((await _results(store, parent))["l1"])
    assert (entry["task_name"], entry["status"]) == ("scan", "cancelled")
    assert turns == 3


async def test_identical_wait_calls_are_not_a_doom_loop_and_the_drain_follows_all_tool_results(
    store: PostgresStore, tmp_path: Path
) -> None:
    """multi-agent.md §5, §6, §10; session-runtime.md §4: three identical ``wait_agent`` calls
    with a message queued all deliver at once (excluded from the identical-call count); the
    message is drained after all three results, so the next request ends with it as a user item."""
    router = _Router()
    holder: list[Runtime] = []

    async def waits_once_mail_is_queued(_request: ModelRequest) -> AsyncIterator[ModelEvent]:
        rt = holder[0]
        (parent,) = [s.id for s in await rt.core.list_sessions()]
        handle = rt.core.sessions.get(parent)
        assert handle is not None
        assert await rt.services[parent].mailbox.wait(BOUND_S)
        calls = tuple((f"w{i}", "wait_agent", "{}") for i in range(3))
        for event in scripted_events(ScriptedResponse(tool_calls=calls)):
            yield event

    router.parent.extend(
        [
            _call("s1", "spawn_agent", {"task_name": "scan", "message": "quick"}),
            waits_once_mail_is_queued,
            ScriptedResponse(text="all in"),
        ]
    )
    router.child("quick", ScriptedResponse(text="quick answer"))
    async with runtime(store, tmp_path, router.model()) as rt:
        holder.append(rt)
        parent = await rt.new_session()
        _, updates = await rt.run_turn(parent, "go")
    assert updates[-1].update.outcome == Completed("all in")  # type: ignore[union-attr]
    results = await _results(store, parent)
    assert [results[f"w{i}"] for i in range(3)] == ['{"delivered":true,"timed_out":false}'] * 3
    last = router.parent_requests[-1]
    assert last.messages[-1].role is Role.USER
    assert _text(last.messages[-1].content).startswith("<agent_message>\n<task>scan</task>")
    assert last.messages[-2].role is Role.TOOL


async def test_an_explorer_cannot_write_the_workspace_and_its_escalation_is_denied_without_a_card(
    store: PostgresStore, tmp_path: Path
) -> None:
    """multi-agent.md §4, §7, §10; permissions-sandbox.md §1, §5: the explorer runs bash in
    ``accept-edits`` (the kernel denies a workspace write) and, being non-interactive, an
    escalation is denied with the nobody-can-approve text and no ``permission_requested``."""
    sandbox = await probe_sandbox()
    assert sandbox.available, f"bubblewrap sandbox unavailable: {sandbox.reason}"
    router = _Router()
    holder: list[Runtime] = []
    parents: list[str] = []
    target = tmp_path / "workspace" / "made_by_child.txt"
    escalated = {
        "command": f"echo x > {target}",
        "sandboxPermissions": {
            "paths": [{"path": str(target.parent.resolve()), "access": "write", "scope": "subtree"}]
        },
        "justification": "The explorer wants to leave a note.",
    }

    async def answer_after_mail(_request: ModelRequest) -> AsyncIterator[ModelEvent]:
        handle = holder[0].core.sessions.get(parents[0])
        assert handle is not None
        assert await holder[0].services[parents[0]].mailbox.wait(BOUND_S)
        for event in scripted_events(ScriptedResponse(text="parent done")):
            yield event

    router.parent.extend(
        [
            _call("s1", "spawn_agent", {"task_name": "writer", "message": "try writing"}),
            answer_after_mail,
            ScriptedResponse(text="noted"),
        ]
    )
    router.child(
        "try writing",
        _call("b1", "bash", {"command": f"echo x > {target}"}),
        _call("b2", "bash", escalated),
        ScriptedResponse(text="could not write"),
    )
    async with runtime(store, tmp_path, router.model(), sandbox=sandbox) as rt:
        subscription = rt.core.global_updates.subscribe()
        holder.append(rt)
        parents.append(await rt.new_session())
        await rt.run_turn(parents[0], "go")
        child_id, _ = await _only_child(rt, parents[0])
        await rt.run_turn(parents[0], "again")
    kinds: list[str] = []
    while not subscription.queue.empty():
        envelope = subscription.queue.get_nowait().envelope
        if envelope.session_id == child_id:
            kinds.append(envelope.update.type)
    subscription.close()
    assert "permission_requested" not in kinds
    assert not target.exists()
    blocks = await _result_blocks(store, child_id)
    texts = {
        k: "".join(b.text for b in v.output if isinstance(b, TextBlock)) for k, v in blocks.items()
    }
    assert "[sandbox: file access denied under accept-edits mode]" in texts["b1"]
    assert blocks["b2"].state.value == "denied"
    assert "nobody can approve" in texts["b2"]


async def test_a_failed_spawn_frees_its_name_and_slot_so_the_same_name_can_be_spawned_again(
    store: PostgresStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """multi-agent.md §5: a spawn whose child row cannot be written fails ``agent_start_failed``
    and releases the name and the slot; the parent Turn continues."""
    router = _Router()
    spawn = orjson.dumps({"task_name": "scan", "message": "look"}).decode()
    router.parent.extend(
        [
            ScriptedResponse(
                tool_calls=(("s1", "spawn_agent", spawn), ("s2", "spawn_agent", spawn))
            ),
            ScriptedResponse(text="ok"),
        ]
    )
    router.child("look", ScriptedResponse(text="seen"))
    async with runtime(store, tmp_path, router.model()) as rt:
        real = AgentStore.create_child_session
        failures = [RuntimeError("the database refused the row")]

        async def flaky(self: AgentStore, **kwargs: object) -> object:
            if failures:
                raise failures.pop()
            return await real(self, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(AgentStore, "create_child_session", flaky)
        parent = await rt.new_session()
        await _child_finishes(rt, parent, 1, rt.run_turn(parent, "go"))
        host = await rt.core.sessions.agent_host(parent)
        active = host.control.slots.active
        children = await rt.core.desktop.children(parent)
    results = await _results(store, parent)
    assert results["s1"] == "agent_start_failed: RuntimeError: the database refused the row"
    assert results["s2"] == '{"task_name":"scan"}'
    assert [c.task_name for c in children] == ["scan"]
    assert active == 0


async def test_an_oversized_final_answer_reaches_the_parent_as_a_failed_notice_and_the_parent_goes_on(
    store: PostgresStore, tmp_path: Path
) -> None:
    """multi-agent.md §6 + context-window.md §7.3 (a decision beyond the spec): an answer at or
    over 4 000 tokens is never delivered as is; the parent gets a ``failed`` message under the
    same id telling the model to ask for a shorter answer, and its next turn still starts."""
    router = _Router()
    release = asyncio.Event()
    router.parent.extend(
        [
            _call("s1", "spawn_agent", {"task_name": "dump", "message": "dump everything"}),
            _after(release.set, _call("w1", "wait_agent")),
            ScriptedResponse(text="parent done"),
            ScriptedResponse(text="next turn"),
        ]
    )
    router.child("dump everything", _held(release, ScriptedResponse(text="z" * 20_000)))
    model = router.model()
    async with runtime(store, tmp_path, model) as rt:
        parent = await rt.new_session()
        await rt.run_turn(parent, "delegate")
        child_id, _ = await _only_child(rt, parent)
        child_turn = (await store_rows.session_messages(rt.core.store.pool, child_id))[0].turn_id
        assert child_turn is not None
        turn_id, _ = await rt.run_turn(parent, "and then?")
        assert (await rt.core.turn_view(parent, turn_id)).final_text == "next turn"
    ((message_id, envelope),) = await _agent_messages(store, parent)
    assert message_id == agent_message_id(child_id, child_turn, AgentMessageKind.FINAL_ANSWER)
    assert "<kind>failed</kind>" in envelope
    assert "agent_delivery_failed: the sub-agent's final_answer message is estimated at" in envelope
    assert "z" * 100 not in envelope


async def test_an_idle_root_unloads_together_with_its_children_and_a_busy_child_keeps_it(
    store: PostgresStore, tmp_path: Path
) -> None:
    """Faults issue point 6: a root goes with its children, never while one of them runs; the
    child is never unloaded on its own while its root is loaded."""
    import time

    router = _Router()
    release = asyncio.Event()
    router.parent.extend(
        [
            _call("s1", "spawn_agent", {"task_name": "scan", "message": "look slowly"}),
            ScriptedResponse(text="spawned"),
        ]
    )
    router.child("look slowly", _held(release, ScriptedResponse(text="found it")))
    async with runtime(store, tmp_path, router.model()) as rt:
        parent = await rt.new_session()
        await rt.run_turn(parent, "delegate")
        child_id, _ = await _only_child(rt, parent)
        sessions = rt.core.sessions
        far = time.monotonic() + 10_000
        assert sessions.get(child_id) is not None
        assert await sessions.unload_idle(now=far) == []  # the child's turn still runs
        await _child_finishes(rt, parent, 1, _release(release))
        assert set(await sessions.unload_idle(now=far)) == {parent, child_id}
        assert sessions.held_leases() == {}


async def _release(event: asyncio.Event) -> None:
    event.set()
