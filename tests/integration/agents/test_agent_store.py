"""AgentStore on real PostgreSQL (multi-agent.md §3, §6, §8; storage.md §2)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import asyncpg
import pytest

from openwork_chat_state.item import MessageKind, RealOrigin
from openwork_chat_state.messages import Message, Role, TextBlock, user_text
from openwork_core.agents.control import AgentControl
from openwork_core.agents.messages import (
    AgentMessage,
    AgentMessageKind,
    ChildCancelled,
    agent_message_content,
    render_agent_message,
    terminal_agent_message,
)
from openwork_core.agents.reconcile import ChildTurn, TurnlessChild
from openwork_core.session.storage import OutgoingMessage
from openwork_core.storage.codec import decode_message, new_message
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.postgres.agents import (
    AgentStore,
    ChildSessionRejected,
    ChildTaskNameTaken,
    fetch_child_terminal_turns,
    fetch_delivered_agent_message_ids,
)
from openwork_core.storage.postgres.session_storage import PostgresSessionStorage
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import TurnStatus
from openwork_tools.modes import SandboxMode
from tests.support import store_rows


async def _drain(
    store: PostgresStore,
    session_id: str,
    turn_id: str,
    rows: Sequence[AgentMessage | OutgoingMessage],
) -> tuple[RealOrigin | None, ...]:
    """One mailbox drain as the runner writes it (``TurnRunner._drain_mailbox`` →
    ``SessionStorage.append_agent_messages``, issue 23 point 4): each envelope under its id,
    ``ON CONFLICT (id) DO NOTHING``; ``None`` for an id already stored."""
    outgoing = [
        r
        if isinstance(r, OutgoingMessage)
        else OutgoingMessage(
            id=r.id, message=agent_message_content(r), kind=MessageKind.AGENT_MESSAGE
        )
        for r in rows
    ]
    storage = PostgresSessionStorage(store.pool, session_id)
    return await storage.append_agent_messages(turn_id, outgoing)


async def _root(store: PostgresStore, sid: str = "root") -> None:
    await store.create_session(
        session_id=sid,
        working_directory="/work",
        agent="default",
        provider_id="p",
        model_name="m",
        sandbox_mode=SandboxMode.AUTO,
    )


async def _child(
    agents: AgentStore, task: str, parent: str = "root", sid: str | None = None
) -> str:
    record = await agents.create_child_session(
        parent_session_id=parent,
        task_name=task,
        agent_role="explorer",
        working_directory="/work",
        provider_id="p",
        model_name="m",
        sandbox_mode=SandboxMode.ACCEPT_EDITS,
        session_id=sid or f"ses_{task}",
    )
    return record.id


async def _turn(store: PostgresStore, sid: str, tid: str, answer: str | None = None) -> None:
    await store_rows.start_turn(
        store.pool,
        session_id=sid,
        turn_id=tid,
        client_request_id=f"req-{tid}",
        provider_id="p",
        model_name="m",
        app_version="test",
        messages=[new_message(f"{tid}-user", user_text("question"), MessageKind.NORMAL)],
    )
    if answer is not None:
        assistant = Message(role=Role.ASSISTANT, content=(TextBlock(text=answer),))
        await store_rows.append_messages(
            store.pool,
            sid,
            tid,
            [new_message(f"{tid}-answer", assistant, MessageKind.NORMAL)],
        )


@pytest.fixture
def agents(store: PostgresStore) -> AgentStore:
    return AgentStore(store.pool)


async def test_a_child_row_has_all_topology_columns_set_and_list_sessions_hides_it(
    store: PostgresStore, agents: AgentStore
) -> None:
    """§3, §10: parent/task/role all set for a child; ``list_sessions`` lists roots only."""
    await _root(store)
    record = await agents.create_child_session(
        parent_session_id="root",
        task_name="scan_auth",
        agent_role="explorer",
        working_directory="/work",
        provider_id="p",
        model_name="m",
        sandbox_mode=SandboxMode.ACCEPT_EDITS,
        spawn_span_id="span_1",
    )
    assert record.parent_session_id == "root"
    assert record.agent == "explorer"
    assert record.sandbox_mode is SandboxMode.ACCEPT_EDITS
    assert record.id.startswith("ses_")
    assert [s.id for s in await store.list_sessions()] == ["root"]
    (child,) = await agents.list_children("root")
    assert (child.id, child.task_name, child.agent_role, child.spawn_span_id) == (
        record.id,
        "scan_auth",
        "explorer",
        "span_1",
    )


async def test_a_duplicate_task_name_under_one_parent_fails_cleanly_and_other_parents_may_reuse_it(
    store: PostgresStore, agents: AgentStore
) -> None:
    """§3, §10: ``uq_sessions_parent_task_name`` backs the registry."""
    await _root(store, "root")
    await _root(store, "other")
    await _child(agents, "scan", sid="ses_1")
    with pytest.raises(ChildTaskNameTaken) as caught:
        await _child(agents, "scan", sid="ses_2")
    assert caught.value.code == "child_task_name_taken"
    await _child(agents, "scan", parent="other", sid="ses_3")
    assert [c.id for c in await agents.list_children("root")] == ["ses_1"]


@pytest.mark.parametrize("task_name", ["Scan", "1scan", "a" + "b" * 48, "scan-x"])
async def test_a_malformed_task_name_is_rejected_by_the_format_constraint_without_a_row(
    store: PostgresStore, agents: AgentStore, task_name: str
) -> None:
    """§3, storage.md §2: ``sessions_task_name_format``."""
    await _root(store)
    with pytest.raises(ChildSessionRejected, match="sessions_task_name_format"):
        await _child(agents, task_name, sid="ses_bad")
    assert await agents.list_children("root") == []


async def test_a_child_cannot_be_the_parent_of_another_child(
    store: PostgresStore, agents: AgentStore
) -> None:
    """§3: depth 1; ``create_sub_agent_session`` refuses a child as parent."""
    await _root(store)
    child = await _child(agents, "scan")
    with pytest.raises(ChildSessionRejected, match="sub-agent"):
        await _child(agents, "nested", parent=child)
    assert await agents.list_children(child) == []


async def test_an_unknown_parent_is_record_not_found(agents: AgentStore) -> None:
    with pytest.raises(RecordNotFound):
        await _child(agents, "scan", parent="ghost")


async def test_the_database_refuses_partial_topology_and_self_parenting(
    store: PostgresStore,
) -> None:
    """storage.md §2: ``sessions_subagent_fields_consistent``, ``sessions_spawn_not_self``."""
    await _root(store)
    async with store.pool.acquire() as conn:
        with pytest.raises(
            asyncpg.CheckViolationError, match="sessions_subagent_fields_consistent"
        ):
            await conn.execute(
                """INSERT INTO sessions (id, working_directory, parent_session_id, task_name)
                   VALUES ('x', '/w', 'root', 'scan')"""
            )
        with pytest.raises(asyncpg.CheckViolationError, match="sessions_spawn_not_self"):
            await conn.execute(
                """INSERT INTO sessions (id, working_directory, parent_session_id, task_name,
                                         agent_role)
                   VALUES ('root', '/w', 'root', 'scan', 'explorer')
                   ON CONFLICT (id) DO UPDATE SET parent_session_id = 'root',
                       task_name = 'scan', agent_role = 'explorer'"""
            )


async def test_an_agent_message_is_stored_once_and_a_duplicate_id_returns_none(
    store: PostgresStore, agents: AgentStore
) -> None:
    """§6: ``INSERT … ON CONFLICT (id) DO NOTHING``; append only if the write succeeded."""
    await _root(store)
    await _turn(store, "root", "pt1")
    message = AgentMessage(
        id="agent-msg:ses_c:t1:final_answer",
        task_name="scan",
        kind=AgentMessageKind.FINAL_ANSWER,
        body="found",
    )
    (origin,) = await _drain(store, "root", "pt1", [message])
    assert origin is not None and (origin.message_id, origin.sequence) == (message.id, 2)
    stored = (await store_rows.session_messages(store.pool, "root"))[1]
    assert (stored.id, stored.role, stored.kind, stored.turn_id, stored.sequence) == (
        message.id,
        Role.USER,
        MessageKind.AGENT_MESSAGE,
        "pt1",
        2,
    )
    assert decode_message(stored) == user_text(render_agent_message(message))
    assert await _drain(store, "root", "pt1", [message]) == (None,)
    other_text = OutgoingMessage(
        id=message.id, message=user_text("other text"), kind=MessageKind.AGENT_MESSAGE
    )
    assert await _drain(store, "root", "pt1", [other_text]) == (None,)
    failed = OutgoingMessage(
        id="agent-msg:ses_c:t2:failed", message=user_text("x: y"), kind=MessageKind.AGENT_MESSAGE
    )
    (other,) = await _drain(store, "root", "pt1", [failed])
    assert other is not None and other.sequence == 3
    assert decode_message((await store_rows.session_messages(store.pool, "root"))[2]) == user_text(
        "x: y"
    )
    async with store.pool.acquire() as conn:
        delivered = await fetch_delivered_agent_message_ids(conn, "root")
    assert delivered == frozenset({message.id, "agent-msg:ses_c:t2:failed"})
    assert [m.id for m in await store_rows.session_messages(store.pool, "root")] == [
        "pt1-user",
        message.id,
        "agent-msg:ses_c:t2:failed",
    ]


async def test_child_terminal_turns_carry_status_error_and_last_assistant_text(
    store: PostgresStore, agents: AgentStore
) -> None:
    """§8: terminal Turns only, with the last assistant message's text."""
    await _root(store)
    done = await _child(agents, "done")
    failing = await _child(agents, "failing")
    busy = await _child(agents, "busy")
    await _turn(store, done, "t_done", answer="first draft")
    assistant = Message(role=Role.ASSISTANT, content=(TextBlock(text="final answer"),))
    await store_rows.append_messages(
        store.pool,
        done,
        "t_done",
        [new_message("t_done-final", assistant, MessageKind.NORMAL)],
    )
    await store_rows.finish_turn(store.pool, "t_done", TurnStatus.COMPLETED)
    await _turn(store, failing, "t_fail")
    await store_rows.finish_turn(
        store.pool, "t_fail", TurnStatus.FAILED, error_code="doom_loop", error_message="loop"
    )
    await _turn(store, busy, "t_busy")
    async with store.pool.acquire() as conn:
        terminal = await fetch_child_terminal_turns(conn, "root")
    assert terminal == [
        ChildTurn(
            child_session_id=done,
            task_name="done",
            turn_id="t_done",
            status=TurnStatus.COMPLETED,
            error_code=None,
            error_message=None,
            last_assistant_text="final answer",
        ),
        ChildTurn(
            child_session_id=failing,
            task_name="failing",
            turn_id="t_fail",
            status=TurnStatus.FAILED,
            error_code="doom_loop",
            error_message="loop",
            last_assistant_text=None,
        ),
    ]


async def test_reconciliation_deletes_turnless_children_and_plans_each_outcome_exactly_once(
    store: PostgresStore, agents: AgentStore, tmp_path: Path
) -> None:
    """§8, §10: restart reconciliation exactly once, zero-turn orphans removed, no parent Turn."""
    await _root(store)
    await _turn(store, "root", "pt1")
    orphan = await _child(agents, "orphan")
    done = await _child(agents, "done")
    cut = await _child(agents, "cut")
    stopped = await _child(agents, "stopped")
    await _turn(store, done, "t_done", answer="a.py:3")
    await store_rows.finish_turn(store.pool, "t_done", TurnStatus.COMPLETED)
    await _turn(store, stopped, "t_stop")
    await store_rows.finish_turn(store.pool, "t_stop", TurnStatus.CANCELLED)
    await _turn(store, cut, "t_cut")
    # the product's restart correction: the child's and the parent's own running Turn
    assert await store_rows.restart_correction(store.pool, tmp_path) == 2

    plan = await agents.reconcile("root")
    assert plan.deleted == (TurnlessChild(child_session_id=orphan, task_name="orphan"),)
    assert [(m.task_name, m.kind.value, m.body) for m in plan.messages] == [
        (
            "cut",
            "interrupted",
            "Sub-agent was interrupted by a process restart and is no longer available. "
            "Spawn a new explorer if this result is still needed.",
        ),
        ("done", "final_answer", "a.py:3"),
        ("stopped", "failed", "cancelled: Sub-agent turn was cancelled."),
    ]
    assert [c.task_name for c in await agents.list_children("root")] == ["cut", "done", "stopped"]

    assert None not in await _drain(store, "root", "pt1", plan.messages)
    again = await agents.reconcile("root")
    assert again.deleted == ()
    assert again.messages == ()
    async with store.pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM turns WHERE session_id = 'root'") == 1


async def test_a_live_interrupt_already_delivered_is_not_reconciled_again(
    store: PostgresStore, agents: AgentStore
) -> None:
    """§6 vs §8: the live ``interrupted`` id counts as delivered for a cancelled Turn."""
    await _root(store)
    await _turn(store, "root", "pt1")
    child = await _child(agents, "scan")
    await _turn(store, child, "t1")
    await store_rows.finish_turn(store.pool, "t1", TurnStatus.CANCELLED)
    live = terminal_agent_message(
        child_session_id=child, child_turn_id="t1", task_name="scan", outcome=ChildCancelled()
    )
    await _drain(store, "root", "pt1", [live])
    assert (await agents.reconcile("root")).messages == ()


async def test_delete_turnless_children_keeps_children_with_turns_and_restore_sees_the_rest(
    store: PostgresStore, agents: AgentStore
) -> None:
    """§2, §8 step 1: names of deleted children are released; restore binds the others."""
    await _root(store)
    await _child(agents, "orphan")
    kept = await _child(agents, "kept")
    await _turn(store, kept, "t1")
    deleted = await agents.delete_turnless_children("root")
    assert [d.task_name for d in deleted] == ["orphan"]
    control = AgentControl.restore("root", await agents.list_children("root"))
    assert control.task_names() == ("kept",)
    control.reserve("orphan")


async def test_deleting_the_parent_cascades_to_children_and_their_turns(
    store: PostgresStore, agents: AgentStore
) -> None:
    """§3, §10: parent deletion cascades."""
    await _root(store)
    child = await _child(agents, "scan")
    await _turn(store, child, "t1", answer="x")
    async with store.pool.acquire() as conn:
        await conn.execute("DELETE FROM sessions WHERE id = 'root'")
        assert await conn.fetchval("SELECT count(*) FROM sessions") == 0
        assert await conn.fetchval("SELECT count(*) FROM turns") == 0
        assert await conn.fetchval("SELECT count(*) FROM messages") == 0


async def test_a_live_child_without_a_turn_yet_is_kept_by_reconciliation(
    store: PostgresStore, agents: AgentStore
) -> None:
    """§8 step 1 deletes failed spawns only: a child whose actor is live keeps its row."""
    await _root(store)
    live = await _child(agents, "spawning")
    orphan = await _child(agents, "orphan")
    plan = await agents.reconcile("root", live_child_ids={live})
    assert [d.child_session_id for d in plan.deleted] == [orphan]
    assert [c.id for c in await agents.list_children("root")] == [live]


async def test_one_drain_is_persisted_in_one_statement_and_duplicates_are_dropped(
    store: PostgresStore, agents: AgentStore
) -> None:
    """§6: each drained message ON CONFLICT DO NOTHING; only written rows are returned, in order."""
    await _root(store)
    await _turn(store, "root", "pt1")
    first = AgentMessage(
        id="agent-msg:c:t1:final_answer",
        task_name="a",
        kind=AgentMessageKind.FINAL_ANSWER,
        body="1",
    )
    second = AgentMessage(
        id="agent-msg:c:t2:failed", task_name="b", kind=AgentMessageKind.FAILED, body="x: y"
    )
    assert await _drain(store, "root", "pt1", []) == ()
    stored = await _drain(store, "root", "pt1", [first, second])
    assert [(o.message_id, o.sequence) for o in stored if o is not None] == [
        (first.id, 2),
        (second.id, 3),
    ]
    assert await _drain(store, "root", "pt1", [second, first]) == (None, None)
    assert len(await store_rows.session_messages(store.pool, "root")) == 3
