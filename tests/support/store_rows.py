"""Rows a test sets up or reads directly, through the row functions the storage modules are made
of (issue 23 point 4: ``PostgresStore`` keeps only what the product calls). A behaviour under
test runs on the product's path — ``PostgresSessionStorage`` for a session's writes,
``PostgresOwnership.register`` for restart correction; these only seed and read rows around it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import asyncpg

from openwork_core.ids import ClientRequestId, SessionId, TurnId
from openwork_core.session.ownership import in_process_identity
from openwork_core.storage.postgres import messages as message_rows
from openwork_core.storage.postgres import turns as turn_rows
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.postgres.messages import MESSAGE_COLUMNS, stored_message
from openwork_core.storage.postgres.ownership import PostgresOwnership
from openwork_core.storage.postgres.sessions import lock_session
from openwork_core.storage.records import (
    NewMessage,
    StoredMessage,
    TurnRecord,
    TurnStatus,
)


async def insert_messages(
    conn: Conn, session_id: SessionId, turn_id: TurnId, messages: Sequence[NewMessage]
) -> list[StoredMessage]:
    """Rows in order with the next per-session sequences (the caller holds a transaction). A
    message whose id already exists is not written again: the stored row is returned."""
    await lock_session(conn, session_id)
    stored: list[StoredMessage] = []
    for message in messages:
        existing = await conn.fetchrow(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = $1", message.id
        )
        if existing is not None:
            stored.append(stored_message(existing))
            continue
        row = await conn.fetchrow(
            f"""INSERT INTO messages (id, session_id, turn_id, sequence, role, content,
                                      provider_call_id, tool_name, message_kind)
                VALUES ($1, $2, $3,
                        (SELECT COALESCE(MAX(sequence), 0) + 1 FROM messages WHERE session_id = $2),
                        $4, $5::jsonb, $6, $7, $8)
                RETURNING {MESSAGE_COLUMNS}""",
            message.id,
            session_id,
            turn_id,
            message.role.value,
            message.content,
            message.provider_call_id,
            message.tool_name,
            message.kind.value,
        )
        assert row is not None
        stored.append(stored_message(row))
    return stored


async def start_turn(
    pool: asyncpg.Pool,
    *,
    session_id: SessionId,
    turn_id: TurnId,
    client_request_id: ClientRequestId,
    provider_id: str,
    model_name: str,
    app_version: str,
    messages: Sequence[NewMessage],
) -> tuple[TurnRecord, list[StoredMessage]]:
    """A running turn row and its messages, in one transaction."""
    async with pool.acquire() as conn, conn.transaction():
        await lock_session(conn, session_id)
        turn = await turn_rows.insert_turn(
            conn,
            turn_id=turn_id,
            session_id=session_id,
            client_request_id=client_request_id,
            provider_id=provider_id,
            model_name=model_name,
            app_version=app_version,
        )
        return turn, await insert_messages(conn, session_id, turn_id, messages)


async def append_messages(
    pool: asyncpg.Pool, session_id: SessionId, turn_id: TurnId, messages: Sequence[NewMessage]
) -> list[StoredMessage]:
    async with pool.acquire() as conn, conn.transaction():
        return await insert_messages(conn, session_id, turn_id, messages)


async def finish_turn(
    pool: asyncpg.Pool,
    turn_id: TurnId,
    status: TurnStatus,
    *,
    error_code: str | None = None,
    error_message: str | None = None,
) -> None:
    async with pool.acquire() as conn:
        await turn_rows.finish_turn(
            conn, turn_id, status, error_code=error_code, error_message=error_message
        )


async def session_messages(pool: asyncpg.Pool, session_id: SessionId) -> list[StoredMessage]:
    async with pool.acquire() as conn:
        return await message_rows.fetch_session_messages(conn, session_id)


async def restart_correction(pool: asyncpg.Pool, home: Path) -> int:
    """The product's restart correction: a new daemon for ``home`` registers
    (``PostgresOwnership.register``) and interrupts the running turns nobody holds a lease on.
    Returns how many it interrupted."""
    return await PostgresOwnership(pool, in_process_identity(home), 30.0).register()
