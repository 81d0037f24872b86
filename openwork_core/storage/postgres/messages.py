"""The append-only ``messages`` table."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import Role
from openwork_core.ids import SessionId, TurnId
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.postgres.sessions import lock_session
from openwork_core.storage.postgres.steady_statements import steady
from openwork_core.storage.records import NewMessage, StoredMessage

_COLUMNS = """id, session_id, turn_id, sequence, role, message_kind, content::text AS content,
    provider_call_id, tool_name, created_at"""


def _row(row: asyncpg.Record) -> StoredMessage:
    return StoredMessage(
        id=row["id"],
        session_id=row["session_id"],
        turn_id=row["turn_id"],
        sequence=row["sequence"],
        role=Role(row["role"]),
        kind=MessageKind(row["message_kind"]),
        content=row["content"],
        provider_call_id=row["provider_call_id"],
        tool_name=row["tool_name"],
        created_at=row["created_at"],
    )


async def insert_messages(
    conn: Conn, session_id: SessionId, turn_id: TurnId, messages: Sequence[NewMessage]
) -> list[StoredMessage]:
    """Insert in order with the next per-session sequences (caller holds a transaction).

    A message whose id already exists is not written again: the stored row is returned, so
    deterministic ids (World State) make repeated writes idempotent."""
    await lock_session(conn, session_id)
    stored: list[StoredMessage] = []
    for message in messages:
        existing = await conn.fetchrow(f"SELECT {_COLUMNS} FROM messages WHERE id = $1", message.id)
        if existing is not None:
            stored.append(_row(existing))
            continue
        row = await conn.fetchrow(
            f"""INSERT INTO messages (id, session_id, turn_id, sequence, role, content,
                                      provider_call_id, tool_name, message_kind)
                VALUES ($1, $2, $3,
                        (SELECT COALESCE(MAX(sequence), 0) + 1 FROM messages WHERE session_id = $2),
                        $4, $5::jsonb, $6, $7, $8)
                RETURNING {_COLUMNS}""",
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
        stored.append(_row(row))
    return stored


MESSAGES_AFTER = steady(f"""SELECT {_COLUMNS} FROM messages WHERE session_id = $1 AND sequence > $2
    ORDER BY sequence LIMIT $3""")


async def fetch_session_messages(
    conn: Conn, session_id: SessionId, *, after_sequence: int = 0, limit: int | None = None
) -> list[StoredMessage]:
    rows = await conn.fetch(
        MESSAGES_AFTER,
        session_id,
        after_sequence,
        limit,
    )
    return [_row(r) for r in rows]


async def fetch_last_assistant_text(conn: Conn, turn_id: TurnId) -> str | None:
    """The text of a turn's last assistant message (its final answer when it completed)."""
    content = await conn.fetchval(
        """SELECT content::text FROM messages WHERE turn_id = $1 AND role = 'assistant'
           ORDER BY sequence DESC LIMIT 1""",
        turn_id,
    )
    return None if content is None else str(content)
