"""Sub-agent rows: child sessions, agent messages, restart reconciliation (multi-agent.md §3, §6, §8;
storage.md §2). Row functions take a ``Conn``; ``AgentStore`` runs each in one transaction."""

from __future__ import annotations

from collections.abc import Collection

import asyncpg

from openwork_chat_state.item import MessageKind
from openwork_core.agents.reconcile import (
    ChildTurn,
    Reconciliation,
    TurnlessChild,
    plan_reconciliation,
)
from openwork_core.ids import SessionId, SpanId, new_session_id
from openwork_core.storage.agent_records import (
    ChildSessionRecord,
    ChildSessionRejected,
    ChildTaskNameTaken,
)
from openwork_core.storage.codec import content_text
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.postgres import sessions as session_rows
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.postgres.latest_turns import fetch_latest_turns
from openwork_core.storage.postgres.sessions import lock_session
from openwork_core.storage.postgres.steady_statements import steady
from openwork_core.storage.records import SessionRecord, TurnRecord, TurnStatus
from openwork_tools.modes import SandboxMode

UNIQUE_TASK_NAME_INDEX = "uq_sessions_parent_task_name"


_CHILD_COLUMNS = """id, working_directory, agent, provider_id, model_name, sandbox_mode,
    tool_result_pruned_through_sequence, parent_session_id, created_at, updated_at,
    task_name, agent_role, spawn_span_id"""

CHILDREN = steady(f"""SELECT {_CHILD_COLUMNS} FROM sessions WHERE parent_session_id = $1
    ORDER BY task_name""")
CHILD_TERMINAL_TURNS = steady("""SELECT s.id AS child_session_id, s.task_name, t.id AS turn_id, t.status,
        t.error_code, t.error_message, last.content::text AS last_content
    FROM sessions s
    JOIN turns t ON t.session_id = s.id
    LEFT JOIN LATERAL (
        SELECT m.content FROM messages m
        WHERE m.turn_id = t.id AND m.session_id = s.id AND m.role = 'assistant'
        ORDER BY m.sequence DESC LIMIT 1
    ) last ON TRUE
    WHERE s.parent_session_id = $1 AND t.status <> 'running'
    ORDER BY s.task_name, t.sequence""")
DELIVERED_AGENT_MESSAGES = steady(
    "SELECT id FROM messages WHERE session_id = $1 AND message_kind = $2"
)
DELETE_TURNLESS_CHILDREN = steady("""DELETE FROM sessions s
    WHERE s.parent_session_id = $1
      AND NOT (s.id = ANY($2::text[]))
      AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.id)
    RETURNING s.id, s.task_name""")


def _child(row: asyncpg.Record) -> ChildSessionRecord:
    return ChildSessionRecord(
        session=session_rows._row(row),
        task_name=row["task_name"],
        agent_role=row["agent_role"],
        spawn_span_id=row["spawn_span_id"],
    )


async def insert_child_session(
    conn: Conn,
    *,
    session_id: SessionId,
    parent_session_id: SessionId,
    task_name: str,
    agent_role: str,
    working_directory: str,
    provider_id: str | None,
    model_name: str | None,
    sandbox_mode: SandboxMode,
    spawn_span_id: SpanId | None,
) -> ChildSessionRecord:
    """Insert a child of a root session (caller holds a transaction). Depth 1: a child parent is
    refused here, the database only forbids self-reference (§3)."""
    grandparent = await conn.fetchrow(
        "SELECT parent_session_id FROM sessions WHERE id = $1 FOR SHARE", parent_session_id
    )
    if grandparent is None:
        raise RecordNotFound(f"unknown session: {parent_session_id}")
    if grandparent["parent_session_id"] is not None:
        raise ChildSessionRejected(
            f"session {parent_session_id} is a sub-agent; it has no children"
        )
    try:
        row = await conn.fetchrow(
            f"""INSERT INTO sessions (id, working_directory, agent, provider_id, model_name,
                                      sandbox_mode, parent_session_id, task_name, agent_role,
                                      spawn_span_id)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $3, $9)
                RETURNING {_CHILD_COLUMNS}""",
            session_id,
            working_directory,
            agent_role,
            provider_id,
            model_name,
            sandbox_mode.value,
            parent_session_id,
            task_name,
            spawn_span_id,
        )
    except asyncpg.UniqueViolationError as exc:
        if exc.constraint_name == UNIQUE_TASK_NAME_INDEX:
            raise ChildTaskNameTaken(
                f"session {parent_session_id} already has a sub-agent named {task_name!r}"
            ) from None
        raise ChildSessionRejected(f"child session {session_id} already exists") from None
    except asyncpg.CheckViolationError as exc:
        raise ChildSessionRejected(
            f"child session violates {exc.constraint_name}: {exc.message}"
        ) from None
    assert row is not None
    return _child(row)


async def fetch_children(conn: Conn, parent_session_id: SessionId) -> list[ChildSessionRecord]:
    rows = await conn.fetch(CHILDREN, parent_session_id)
    return [_child(r) for r in rows]


async def fetch_child_terminal_turns(conn: Conn, parent_session_id: SessionId) -> list[ChildTurn]:
    """Every terminal Turn of every direct child, by task name then Turn sequence, with the text
    of the Turn's last assistant message."""
    rows = await conn.fetch(CHILD_TERMINAL_TURNS, parent_session_id)
    return [
        ChildTurn(
            child_session_id=r["child_session_id"],
            task_name=r["task_name"],
            turn_id=r["turn_id"],
            status=TurnStatus(r["status"]),
            error_code=r["error_code"],
            error_message=r["error_message"],
            last_assistant_text=None
            if r["last_content"] is None
            else content_text(r["last_content"]),
        )
        for r in rows
    ]


async def fetch_delivered_agent_message_ids(
    conn: Conn, parent_session_id: SessionId
) -> frozenset[str]:
    rows = await conn.fetch(
        DELIVERED_AGENT_MESSAGES, parent_session_id, MessageKind.AGENT_MESSAGE.value
    )
    return frozenset(r["id"] for r in rows)


async def delete_turnless_child_rows(
    conn: Conn, parent_session_id: SessionId, keep: Collection[str] = ()
) -> list[TurnlessChild]:
    """Delete the direct children without a Turn, except the session ids in ``keep`` (children
    whose actor is live: a spawn in flight has its row before its first Turn row)."""
    rows = await conn.fetch(DELETE_TURNLESS_CHILDREN, parent_session_id, list(keep))
    deleted = [TurnlessChild(child_session_id=r["id"], task_name=r["task_name"]) for r in rows]
    return sorted(deleted, key=lambda c: c.task_name)


class AgentStore:
    """Durable sub-agent facts; each method is one transaction."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def create_child_session(
        self,
        *,
        parent_session_id: SessionId,
        task_name: str,
        agent_role: str,
        working_directory: str,
        provider_id: str | None,
        model_name: str | None,
        sandbox_mode: SandboxMode,
        spawn_span_id: SpanId | None = None,
        session_id: SessionId | None = None,
    ) -> SessionRecord:
        """The child row (``agent`` = ``agent_role``). ``RecordNotFound`` for an unknown parent,
        ``ChildTaskNameTaken`` for a taken name, ``ChildSessionRejected`` for any other
        constraint (malformed name, a child as parent)."""
        async with self._pool.acquire() as conn, conn.transaction():
            child = await insert_child_session(
                conn,
                session_id=session_id or new_session_id(),
                parent_session_id=parent_session_id,
                task_name=task_name,
                agent_role=agent_role,
                working_directory=working_directory,
                provider_id=provider_id,
                model_name=model_name,
                sandbox_mode=sandbox_mode,
                spawn_span_id=spawn_span_id,
            )
            return child.session

    async def get_session(self, session_id: SessionId) -> SessionRecord:
        async with self._pool.acquire() as conn:
            return await session_rows.fetch_session(conn, session_id)

    async def latest_turns(self, session_ids: Collection[str]) -> dict[str, TurnRecord]:
        """Session id → its latest Turn (``list_agents``, §5)."""
        return await fetch_latest_turns(self._pool, session_ids)

    async def list_children(self, parent_session_id: SessionId) -> list[ChildSessionRecord]:
        """Direct children sorted by task name (``AgentControl.restore``)."""
        async with self._pool.acquire() as conn:
            return await fetch_children(conn, parent_session_id)

    async def delete_turnless_children(
        self, parent_session_id: SessionId, *, keep: Collection[str] = ()
    ) -> list[TurnlessChild]:
        async with self._pool.acquire() as conn, conn.transaction():
            await lock_session(conn, parent_session_id)
            return await delete_turnless_child_rows(conn, parent_session_id, keep)

    async def reconcile(
        self, parent_session_id: SessionId, *, live_child_ids: Collection[str] = ()
    ) -> Reconciliation:
        """§8 in one transaction locking the parent row: delete turnless children (except
        ``live_child_ids``, whose actors are running), then plan the messages for terminal child
        Turns absent from the parent's messages. Nothing is enqueued or written for them here:
        the caller checks each (``check_deliverable``) and delivers it to the parent's mailbox;
        the drain persists it."""
        async with self._pool.acquire() as conn, conn.transaction():
            await lock_session(conn, parent_session_id)
            deleted = await delete_turnless_child_rows(conn, parent_session_id, live_child_ids)
            delivered = await fetch_delivered_agent_message_ids(conn, parent_session_id)
            turns = await fetch_child_terminal_turns(conn, parent_session_id)
        return plan_reconciliation(
            delivered_ids=delivered, child_turns=turns, turnless_children=deleted
        )
