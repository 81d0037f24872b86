"""The child-session storage port (multi-agent.md §2, §3, §5, §8; issue 23 point 6): the
PostgreSQL ``AgentStore`` and the in-memory ``InMemorySessions`` keep the same contract — depth
1, a task name unique per parent and of the stored format, the latest turn of each child,
turnless children deleted by reconciliation except live ones, and the agent message a terminal
child turn still owes its parent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

import pytest

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import Message, Role, TextBlock, user_text
from openwork_core.agents.messages import AgentMessageKind, agent_message_content
from openwork_core.ids import SessionId
from openwork_core.session.storage import (
    ChildSessionStorage,
    OutgoingMessage,
    SessionRecord,
    SessionStorage,
    StepWrite,
    TurnClosing,
    TurnOpening,
    TurnStatus,
)
from openwork_core.storage.agent_records import ChildSessionRejected, ChildTaskNameTaken
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.memory_sessions import InMemorySessions
from openwork_core.storage.postgres.agents import AgentStore
from openwork_core.storage.postgres.session_storage import PostgresSessionStorage
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.usage_records import ModelCallRecord
from openwork_core.usage import TokenUsage
from openwork_tools.modes import SandboxMode

ROOT = SessionId("ses_root")


class _Sessions(Protocol):
    children: ChildSessionStorage

    def storage(self, session_id: SessionId) -> SessionStorage: ...


@dataclass
class _Postgres:
    children: AgentStore
    store: PostgresStore

    def storage(self, session_id: SessionId) -> SessionStorage:
        return PostgresSessionStorage(self.store.pool, session_id)


@dataclass
class _Memory:
    children: InMemorySessions

    def storage(self, session_id: SessionId) -> SessionStorage:
        return self.children.storage(session_id)


@pytest.fixture(params=["postgres", "memory"])
async def sessions(
    request: pytest.FixtureRequest, store: PostgresStore
) -> AsyncIterator[_Sessions]:
    if request.param == "memory":
        memory = InMemorySessions()
        now = datetime.now(UTC)
        memory.create_session(
            SessionRecord(
                id=ROOT,
                working_directory="/tmp",
                agent="default",
                provider_id=None,
                model_name=None,
                sandbox_mode=SandboxMode.AUTO,
                tool_result_pruned_through_sequence=None,
                parent_session_id=None,
                created_at=now,
                updated_at=now,
            )
        )
        yield _Memory(memory)
        return
    await store.create_session(
        session_id=ROOT,
        working_directory="/tmp",
        agent="default",
        provider_id=None,
        model_name=None,
        sandbox_mode=SandboxMode.AUTO,
    )
    yield _Postgres(AgentStore(store.pool), store)


async def _child(sessions: _Sessions, name: str, parent: SessionId = ROOT) -> SessionRecord:
    return await sessions.children.create_child_session(
        parent_session_id=parent,
        task_name=name,
        agent_role="worker",
        working_directory="/tmp",
        provider_id=None,
        model_name=None,
        sandbox_mode=SandboxMode.AUTO,
    )


async def _answered_turn(storage: SessionStorage, turn_id: str, answer: str) -> None:
    await storage.start_turn(
        TurnOpening(
            turn_id=turn_id,
            client_request_id=f"req-{turn_id}",
            provider_id="p",
            model_name="m",
            app_version="test",
        ),
        [OutgoingMessage(id=f"{turn_id}-user", message=user_text("go"))],
    )
    response = Message(role=Role.ASSISTANT, content=(TextBlock(text=answer),))
    call = ModelCallRecord(
        model_call=1,
        submission=1,
        provider_id="p",
        model_name="m",
        usage=TokenUsage(input_tokens=3, output_tokens=1),
        estimated_input_tokens=3,
        input_truncation_suspected=False,
        stable_prefix_hash="h",
        request_bytes=10,
        shared_prefix_bytes=None,
        cache_miss=None,
        idle_seconds=None,
    )
    await storage.append(
        turn_id,
        StepWrite(
            messages=(OutgoingMessage(id=f"{turn_id}-answer", message=response),), response=call
        ),
    )
    await storage.finish_turn(turn_id, TurnClosing(status=TurnStatus.COMPLETED))


async def test_a_child_is_one_level_deep_and_its_task_name_unique_and_well_formed(
    sessions: _Sessions,
) -> None:
    """multi-agent.md §3: depth 1, ``uq_sessions_parent_task_name``, the task name format."""
    child = await _child(sessions, "reader")
    assert (child.parent_session_id, child.agent) == (ROOT, "worker")
    assert await sessions.children.get_session(child.id) == child
    with pytest.raises(ChildTaskNameTaken):
        await _child(sessions, "reader")
    with pytest.raises(ChildSessionRejected):
        await _child(sessions, "Not A Name")
    with pytest.raises(ChildSessionRejected):
        await _child(sessions, "grandchild", parent=child.id)
    with pytest.raises(RecordNotFound):
        await _child(sessions, "orphan", parent=SessionId("ses_unknown"))
    listed = await sessions.children.list_children(ROOT)
    assert [(c.id, c.task_name, c.agent_role) for c in listed] == [(child.id, "reader", "worker")]


async def test_reconciliation_deletes_turnless_children_and_owes_each_finished_turn_its_message(
    sessions: _Sessions,
) -> None:
    """multi-agent.md §8: a child without a turn (a failed spawn) is deleted unless its actor is
    live; a terminal child turn the parent never received becomes its final-answer message, and
    once delivered it is owed no more."""
    done = await _child(sessions, "done")
    live = await _child(sessions, "live")
    failed = await _child(sessions, "failed")
    await _answered_turn(sessions.storage(done.id), "t-done", "42")
    latest = await sessions.children.latest_turns([done.id, live.id])
    assert list(latest) == [done.id]
    assert (latest[done.id].id, latest[done.id].status) == ("t-done", TurnStatus.COMPLETED)

    plan = await sessions.children.reconcile(ROOT, live_child_ids=[live.id])
    assert [(c.child_session_id, c.task_name) for c in plan.deleted] == [(failed.id, "failed")]
    assert [c.task_name for c in await sessions.children.list_children(ROOT)] == ["done", "live"]
    (owed,) = plan.messages
    assert (owed.kind, owed.task_name) == (AgentMessageKind.FINAL_ANSWER, "done")

    root = sessions.storage(ROOT)
    await root.start_turn(
        TurnOpening(
            turn_id="t-root",
            client_request_id="req-root",
            provider_id="p",
            model_name="m",
            app_version="test",
        ),
        [OutgoingMessage(id="root-user", message=user_text("hi"))],
    )
    delivered = OutgoingMessage(
        id=owed.id, message=agent_message_content(owed), kind=MessageKind.AGENT_MESSAGE
    )
    assert (await root.append_agent_messages("t-root", [delivered]))[0] is not None
    again = await sessions.children.reconcile(ROOT, live_child_ids=[live.id])
    assert again.messages == () and again.deleted == ()
