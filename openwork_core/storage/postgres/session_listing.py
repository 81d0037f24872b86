"""The session list, its summaries, the user's title / archived patch and deletion (issue 16).

Deletion removes the session and its sub-agents in one transaction (every dependent row goes by
``ON DELETE CASCADE``) and refuses while any of them has a running Turn row."""

from __future__ import annotations

import asyncpg

from openwork_core.ids import SessionId, TurnId
from openwork_core.session.errors import SessionActive
from openwork_core.storage.desktop_records import (
    SessionFilter,
    SessionPatch,
    SessionSummaryRow,
)
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.postgres.connection import Conn
from openwork_tools.modes import SandboxMode


class SessionTreeRunning(SessionActive):
    """A Turn of the session or of one of its sub-agents is running; nothing was deleted."""

    def __init__(self, turn_id: TurnId) -> None:
        super().__init__(turn_id)
        self.turn_id = turn_id


_SUMMARY = """SELECT s.id, s.working_directory, s.agent, s.provider_id, s.model_name,
        s.sandbox_mode, s.parent_session_id, s.created_at, s.title, s.status = 'archived' AS archived,
        (SELECT count(*) FROM turns t WHERE t.session_id = s.id) AS turn_count,
        (SELECT t.id FROM turns t WHERE t.session_id = s.id AND t.status = 'running' LIMIT 1)
            AS running_turn_id,
        GREATEST(s.created_at, s.last_turn_at,
                 (SELECT max(t.ended_at) FROM turns t WHERE t.session_id = s.id),
                 (SELECT max(m.created_at) FROM messages m WHERE m.session_id = s.id))
            AS last_activity_at,
        CASE WHEN s.title IS NULL THEN
            (SELECT m.content::text FROM messages m
             WHERE m.session_id = s.id AND m.role = 'user' AND m.message_kind = 'normal'
             ORDER BY m.sequence LIMIT 1)
        END AS first_user_content
    FROM sessions s"""


def _summary(row: asyncpg.Record) -> SessionSummaryRow:
    return SessionSummaryRow(
        id=row["id"],
        working_directory=row["working_directory"],
        agent=row["agent"],
        provider_id=row["provider_id"],
        model_name=row["model_name"],
        sandbox_mode=SandboxMode(row["sandbox_mode"]),
        parent_session_id=row["parent_session_id"],
        created_at=row["created_at"],
        title=row["title"],
        archived=row["archived"],
        turn_count=row["turn_count"],
        running_turn_id=row["running_turn_id"],
        last_activity_at=row["last_activity_at"],
        first_user_content=row["first_user_content"],
    )


async def fetch_summary(conn: Conn, session_id: SessionId) -> SessionSummaryRow:
    row = await conn.fetchrow(f"{_SUMMARY} WHERE s.id = $1", session_id)
    if row is None:
        raise RecordNotFound(f"unknown session: {session_id}")
    return _summary(row)


async def list_root_summaries(conn: Conn, query: SessionFilter) -> list[SessionSummaryRow]:
    """Root sessions newest first, after the keyset position; ``limit`` rows at most."""
    after = query.after
    rows = await conn.fetch(
        f"""{_SUMMARY}
            WHERE s.parent_session_id IS NULL
              AND ($1::text IS NULL OR s.working_directory = $1)
              AND ($2::bool IS NULL OR (s.status = 'archived') = $2)
              AND ($3::timestamptz IS NULL OR (s.created_at, s.id) < ($3, $4::text))
            ORDER BY s.created_at DESC, s.id DESC
            LIMIT $5""",
        query.workspace,
        query.archived,
        None if after is None else after.created_at,
        None if after is None else after.session_id,
        query.limit,
    )
    return [_summary(r) for r in rows]


async def patch_session(conn: Conn, session_id: SessionId, patch: SessionPatch) -> None:
    result = await conn.execute(
        """UPDATE sessions SET
               title = CASE WHEN $2 THEN NULL ELSE COALESCE($3, title) END,
               status = CASE WHEN $4::bool IS NULL THEN status
                             WHEN $4 THEN 'archived' ELSE 'active' END,
               updated_at = now()
           WHERE id = $1""",
        session_id,
        patch.clear_title,
        patch.title,
        patch.archived,
    )
    if result != "UPDATE 1":
        raise RecordNotFound(f"unknown session: {session_id}")


async def session_tree_ids(conn: Conn, session_id: SessionId) -> tuple[SessionId, ...]:
    """The session and every sub-agent below it, root first."""
    rows = await conn.fetch(
        """WITH RECURSIVE tree(id, depth) AS (
               SELECT id, 0 FROM sessions WHERE id = $1
               UNION ALL
               SELECT s.id, tree.depth + 1 FROM sessions s JOIN tree ON s.parent_session_id = tree.id
           )
           SELECT id FROM tree ORDER BY depth, id""",
        session_id,
    )
    return tuple(SessionId(r["id"]) for r in rows)


async def delete_session_tree(conn: Conn, session_id: SessionId) -> tuple[SessionId, ...]:
    """In one transaction: lock the tree's rows, refuse while a Turn runs, delete. Returns the
    ids removed (root first) so the caller can remove their spill files after the commit."""
    async with conn.transaction():
        ids = await session_tree_ids(conn, session_id)
        if not ids:
            raise RecordNotFound(f"unknown session: {session_id}")
        await conn.execute("SELECT 1 FROM sessions WHERE id = ANY($1::text[]) FOR UPDATE", ids)
        running = await conn.fetchval(
            """SELECT id FROM turns WHERE session_id = ANY($1::text[]) AND status = 'running'
               LIMIT 1""",
            ids,
        )
        if running is not None:
            raise SessionTreeRunning(TurnId(str(running)))
        await conn.execute("DELETE FROM sessions WHERE id = $1", session_id)
        return ids
