"""``file_change`` artifacts inside stored tool results (tools.md §8). Messages are append-only;
the one in-place update the storage contract allows is an artifact's ``undone`` flag."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import asyncpg
import orjson
from pydantic import JsonValue

from openwork_core.ids import SessionId
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.postgres.sessions import lock_session
from openwork_core.storage.records import FILE_CHANGE_TYPE, StoredFileChange


def _artifacts(content: str) -> list[dict[str, JsonValue]]:
    found: list[dict[str, JsonValue]] = []
    for block in orjson.loads(content):
        for artifact in block.get("artifacts") or ():
            if isinstance(artifact, dict) and artifact.get("type") == FILE_CHANGE_TYPE:
                found.append(artifact)
    return found


class FileChangeStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def find(
        self, session_id: SessionId, change_ids: Sequence[str]
    ) -> list[StoredFileChange]:
        """The named changes in creation order (message sequence, then artifact order)."""
        wanted = set(change_ids)
        async with self._pool.acquire() as conn:
            rows = await conn.fetch(
                """SELECT id, sequence, content::text AS content FROM messages
                   WHERE session_id = $1 AND role = 'tool' AND content::text LIKE '%file_change%'
                   ORDER BY sequence""",
                session_id,
            )
        return [
            StoredFileChange(message_id=r["id"], sequence=r["sequence"], artifact=a)
            for r in rows
            for a in _artifacts(r["content"])
            if a.get("changeId") in wanted
        ]

    async def set_undone(self, session_id: SessionId, undone: Mapping[str, bool]) -> None:
        """Rewrite the ``undone`` flag of the named changes, all in one transaction."""
        async with self._pool.acquire() as conn, conn.transaction():
            await rewrite_undone(conn, session_id, undone)


async def rewrite_undone(conn: Conn, session_id: SessionId, undone: Mapping[str, bool]) -> None:
    """The ``undone`` flags of the named changes (caller holds a transaction)."""
    await lock_session(conn, session_id)
    rows = await conn.fetch(
        """SELECT id, content::text AS content FROM messages
           WHERE session_id = $1 AND role = 'tool' AND content::text LIKE '%file_change%'
           FOR UPDATE""",
        session_id,
    )
    for row in rows:
        blocks = orjson.loads(row["content"])
        touched = False
        for block in blocks:
            for artifact in block.get("artifacts") or ():
                change_id = artifact.get("changeId") if isinstance(artifact, dict) else None
                if isinstance(change_id, str) and change_id in undone:
                    artifact["undone"] = undone[change_id]
                    touched = True
        if touched:
            await conn.execute(
                "UPDATE messages SET content = $2::jsonb WHERE id = $1",
                row["id"],
                orjson.dumps(blocks).decode(),
            )
