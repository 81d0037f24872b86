"""The ``sessions`` table."""

from __future__ import annotations

import asyncpg

from openwork_core.ids import SessionId
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.postgres.steady_statements import steady
from openwork_core.storage.records import SessionRecord
from openwork_tools.modes import SandboxMode

_COLUMNS = """id, working_directory, agent, provider_id, model_name, sandbox_mode,
    tool_result_pruned_through_sequence, parent_session_id, created_at, updated_at"""


INSERT_SESSION = steady(f"""INSERT INTO sessions
        (id, working_directory, agent, provider_id, model_name, sandbox_mode)
    VALUES ($1, $2, $3, $4, $5, $6) RETURNING {_COLUMNS}""")
SESSION_BY_ID = steady(f"SELECT {_COLUMNS} FROM sessions WHERE id = $1")
LOCK_SESSION = steady("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE")


def _row(row: asyncpg.Record) -> SessionRecord:
    return SessionRecord(
        id=row["id"],
        working_directory=row["working_directory"],
        agent=row["agent"],
        provider_id=row["provider_id"],
        model_name=row["model_name"],
        sandbox_mode=SandboxMode(row["sandbox_mode"]),
        tool_result_pruned_through_sequence=row["tool_result_pruned_through_sequence"],
        parent_session_id=row["parent_session_id"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


async def insert_session(
    conn: Conn,
    *,
    session_id: SessionId,
    working_directory: str,
    agent: str,
    provider_id: str | None,
    model_name: str | None,
    sandbox_mode: SandboxMode,
) -> SessionRecord:
    row = await conn.fetchrow(
        INSERT_SESSION,
        session_id,
        working_directory,
        agent,
        provider_id,
        model_name,
        sandbox_mode.value,
    )
    assert row is not None
    return _row(row)


async def fetch_session(conn: Conn, session_id: SessionId) -> SessionRecord:
    row = await conn.fetchrow(SESSION_BY_ID, session_id)
    if row is None:
        raise RecordNotFound(f"unknown session: {session_id}")
    return _row(row)


async def list_root_sessions(conn: Conn) -> list[SessionRecord]:
    rows = await conn.fetch(
        f"""SELECT {_COLUMNS} FROM sessions WHERE parent_session_id IS NULL
            ORDER BY created_at DESC, id"""
    )
    return [_row(r) for r in rows]


async def update_sandbox_mode(
    conn: Conn, session_id: SessionId, mode: SandboxMode
) -> SessionRecord:
    row = await conn.fetchrow(
        f"""UPDATE sessions SET sandbox_mode = $2, updated_at = now() WHERE id = $1
            RETURNING {_COLUMNS}""",
        session_id,
        mode.value,
    )
    if row is None:
        raise RecordNotFound(f"unknown session: {session_id}")
    return _row(row)


async def lock_session(conn: Conn, session_id: SessionId) -> None:
    """Serialize sequence allocation for one session (inside a transaction)."""
    found = await conn.fetchval(LOCK_SESSION, session_id)
    if found is None:
        raise RecordNotFound(f"unknown session: {session_id}")
