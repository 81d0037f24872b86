"""``turn_reverts`` rows (migration 0015; issue 26 point 3): which turns a session's active reverts
hide from its Conversation, and the reads a revert plans with."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg
import orjson

from openwork_core.ids import SessionId, TurnId
from openwork_core.session.errors import (
    RevertCrossesCompaction,
    TurnAlreadyReverted,
    UnrevertUnavailable,
)
from openwork_core.session.ownership import SessionLease
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.postgres.ownership import check_lease
from openwork_core.storage.postgres.steady_statements import steady
from openwork_core.storage.records import FILE_CHANGE_TYPE, StoredMessage
from openwork_core.storage.revert_records import ActiveRevert, RevertPlan

_HIDDEN = steady("""SELECT t.id FROM turns t JOIN turn_reverts r ON r.session_id = t.session_id
    WHERE t.session_id = $1 AND r.unreverted_at IS NULL
      AND t.sequence BETWEEN r.from_turn_sequence AND r.through_turn_sequence""")
"""Read at every session load (the projection)."""


async def reverted_turn_ids(conn: Conn, session_id: SessionId) -> frozenset[TurnId]:
    """The turns an active revert hides."""
    return frozenset(TurnId(r["id"]) for r in await conn.fetch(_HIDDEN, session_id))


async def without_reverted(
    conn: Conn, session_id: SessionId, rows: Sequence[StoredMessage]
) -> tuple[StoredMessage, ...]:
    """``rows`` without the messages of reverted turns (the Conversation's projection)."""
    hidden = await reverted_turn_ids(conn, session_id)
    return tuple(rows) if not hidden else tuple(r for r in rows if r.turn_id not in hidden)


def _changes(contents: Sequence[str]) -> tuple[str, ...]:
    found: list[str] = []
    for content in contents:
        for block in orjson.loads(content):
            for artifact in block.get("artifacts") or ():
                if (
                    isinstance(artifact, dict)
                    and artifact.get("type") == FILE_CHANGE_TYPE
                    and not artifact.get("undone")
                    and isinstance(artifact.get("changeId"), str)
                ):
                    found.append(artifact["changeId"])
    return tuple(found)


class PostgresReverts:
    """``RevertStore`` of one session, fenced by its lease."""

    def __init__(
        self, pool: asyncpg.Pool, session_id: SessionId, lease: SessionLease | None = None
    ) -> None:
        self._pool = pool
        self._session_id = session_id
        self._lease = lease

    async def hidden(self) -> frozenset[TurnId]:
        async with self._pool.acquire() as conn:
            return await reverted_turn_ids(conn, self._session_id)

    async def plan(self, turn_id: TurnId) -> RevertPlan:
        """What reverting ``turn_id`` hides and undoes; ``RecordNotFound``,
        ``TurnAlreadyReverted``, ``RevertCrossesCompaction``."""
        sid = self._session_id
        async with self._pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
            first = await conn.fetchval(
                "SELECT sequence FROM turns WHERE session_id = $1 AND id = $2", sid, turn_id
            )
            if first is None:
                raise RecordNotFound(f"unknown turn: {turn_id}")
            hidden = await reverted_turn_ids(conn, sid)
            if turn_id in hidden:
                raise TurnAlreadyReverted(turn_id)
            turns = [
                TurnId(r["id"])
                for r in await conn.fetch(
                    "SELECT id FROM turns WHERE session_id = $1 AND sequence >= $2 "
                    "ORDER BY sequence",
                    sid,
                    first,
                )
                if r["id"] not in hidden
            ]
            through = await conn.fetchval(
                "SELECT MAX(sequence) FROM turns WHERE session_id = $1", sid
            )
            first_message = await conn.fetchval(
                "SELECT MIN(sequence) FROM messages WHERE session_id = $1 AND turn_id = $2",
                sid,
                turn_id,
            )
            covered = first_message is not None and await conn.fetchval(
                """SELECT 1 FROM conversation_compactions
                   WHERE session_id = $1 AND through_message_sequence >= $2 LIMIT 1""",
                sid,
                first_message,
            )
            if covered:
                raise RevertCrossesCompaction(turn_id)
            contents = await conn.fetch(
                """SELECT content::text AS content FROM messages
                   WHERE session_id = $1 AND role = 'tool' AND turn_id = ANY($2::text[])
                     AND content::text LIKE '%file_change%' ORDER BY sequence""",
                sid,
                turns,
            )
        return RevertPlan(
            from_sequence=first,
            through_sequence=through,
            turn_ids=tuple(turns),
            change_ids=_changes([r["content"] for r in contents]),
        )

    async def record(self, revert_id: str, plan: RevertPlan) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            if self._lease is not None:
                await check_lease(conn, self._lease)
            await conn.execute(
                """INSERT INTO turn_reverts (id, session_id, from_turn_sequence,
                                             through_turn_sequence)
                   VALUES ($1, $2, $3, $4)""",
                revert_id,
                self._session_id,
                plan.from_sequence,
                plan.through_sequence,
            )

    async def set_undone(self, revert_id: str, change_ids: Sequence[str]) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            if self._lease is not None:
                await check_lease(conn, self._lease)
            await conn.execute(
                "UPDATE turn_reverts SET undone_change_ids = $2::jsonb WHERE id = $1",
                revert_id,
                orjson.dumps(list(change_ids)).decode(),
            )

    async def last_active(self) -> ActiveRevert:
        """The session's last revert still in force, when no turn started after it;
        ``UnrevertUnavailable`` otherwise."""
        sid = self._session_id
        async with self._pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
            row = await conn.fetchrow(
                """SELECT id, from_turn_sequence, through_turn_sequence,
                          undone_change_ids::text AS undone, unreverted_at
                   FROM turn_reverts WHERE session_id = $1
                   ORDER BY created_at DESC, id DESC LIMIT 1""",
                sid,
            )
            if row is None or row["unreverted_at"] is not None:
                raise UnrevertUnavailable("there is no revert to put back")
            later = await conn.fetchval(
                "SELECT 1 FROM turns WHERE session_id = $1 AND sequence > $2 LIMIT 1",
                sid,
                row["through_turn_sequence"],
            )
            if later:
                raise UnrevertUnavailable(
                    "a turn started after the last revert; its turns stay reverted"
                )
            hidden_before = await reverted_turn_ids(conn, sid)
            turns = await conn.fetch(
                """SELECT id FROM turns WHERE session_id = $1 AND sequence BETWEEN $2 AND $3
                   ORDER BY sequence""",
                sid,
                row["from_turn_sequence"],
                row["through_turn_sequence"],
            )
        return ActiveRevert(
            revert_id=row["id"],
            turn_ids=tuple(TurnId(t["id"]) for t in turns if t["id"] in hidden_before),
            change_ids=tuple(orjson.loads(row["undone"])),
        )

    async def unrevert(self, revert_id: str) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            if self._lease is not None:
                await check_lease(conn, self._lease)
            await conn.execute(
                "UPDATE turn_reverts SET unreverted_at = now() WHERE id = $1", revert_id
            )
