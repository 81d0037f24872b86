"""The append-only ``messages`` table."""

from __future__ import annotations

import asyncpg

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import Role
from openwork_core.ids import SessionId, TurnId
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.postgres.steady_statements import steady
from openwork_core.storage.records import StoredMessage

MESSAGE_COLUMNS = """id, session_id, turn_id, sequence, role, message_kind, content::text AS content,
    provider_call_id, tool_name, created_at"""


def stored_message(row: asyncpg.Record) -> StoredMessage:
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


MESSAGES_AFTER = steady(f"""SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 AND sequence > $2
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
    return [stored_message(r) for r in rows]


async def fetch_last_assistant_text(conn: Conn, turn_id: TurnId) -> str | None:
    """The text of a turn's last assistant message (its final answer when it completed)."""
    content = await conn.fetchval(
        """SELECT content::text FROM messages WHERE turn_id = $1 AND role = 'assistant'
           ORDER BY sequence DESC LIMIT 1""",
        turn_id,
    )
    return None if content is None else str(content)
