"""``turn_steers`` rows (migration 0014; issue 26 point 1): a steer's row commits before its 202,
with the user messages it carries, unique per session and client request id."""

from __future__ import annotations

import asyncpg
import orjson

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import CONTENT_BLOCKS, Message, Role
from openwork_core.ids import ClientRequestId, MessageId, SessionId, SteerId, TurnId
from openwork_core.session.ownership import SessionLease
from openwork_core.session.runner.steering import Steer, SteerAccepted
from openwork_core.session.storage import OutgoingMessage
from openwork_core.storage.codec import encode_content
from openwork_core.storage.postgres.ownership import check_lease
from openwork_core.storage.postgres.steady_statements import steady

_STRANDED = steady("""SELECT s.id, s.turn_id, s.client_request_id, s.messages::text AS messages
    FROM turn_steers s JOIN turns t ON t.id = s.turn_id
    WHERE s.session_id = $1 AND t.status <> 'running'
      AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = s.messages -> 0 ->> 'id')
    ORDER BY s.created_at, s.id""")
"""Read at every session load (``write_stranded``)."""

_FIND = """SELECT id, turn_id FROM turn_steers WHERE session_id = $1 AND client_request_id = $2"""


def _accepted(row: asyncpg.Record) -> SteerAccepted:
    return SteerAccepted(TurnId(row["turn_id"]), SteerId(row["id"]))


def _stranded(row: asyncpg.Record) -> Steer:
    messages = tuple(
        OutgoingMessage(
            id=MessageId(m["id"]),
            message=Message(
                role=Role.USER, content=tuple(CONTENT_BLOCKS.validate_python(m["content"]))
            ),
            kind=MessageKind(m["kind"]),
        )
        for m in orjson.loads(row["messages"])
    )
    return Steer(
        accepted=_accepted(row),
        client_request_id=ClientRequestId(row["client_request_id"]),
        messages=messages,
        text="",
    )


class PostgresSteers:
    """``SteerStore`` of one session, fenced by its lease like every write of the session."""

    def __init__(
        self, pool: asyncpg.Pool, session_id: SessionId, lease: SessionLease | None = None
    ) -> None:
        self._pool = pool
        self._session_id = session_id
        self._lease = lease

    async def find(self, client_request_id: ClientRequestId) -> SteerAccepted | None:
        async with self._pool.acquire() as conn:
            row = await conn.fetchrow(_FIND, self._session_id, client_request_id)
        return None if row is None else _accepted(row)

    async def stranded(self) -> tuple[Steer, ...]:
        """Steers committed for a turn that ended without writing them (the daemon died
        before the turn's next boundary), oldest first."""
        async with self._pool.acquire() as conn:
            rows = await conn.fetch(_STRANDED, self._session_id)
        return tuple(_stranded(r) for r in rows)

    async def record(self, steer: Steer) -> SteerAccepted:
        messages = [
            {
                "id": m.id,
                "kind": m.kind.value,
                "content": orjson.Fragment(encode_content(m.message)),
            }
            for m in steer.messages
        ]
        async with self._pool.acquire() as conn, conn.transaction():
            if self._lease is not None:
                await check_lease(conn, self._lease)
            row = await conn.fetchrow(
                """INSERT INTO turn_steers (id, session_id, turn_id, client_request_id, messages)
                   VALUES ($1, $2, $3, $4, $5::jsonb)
                   ON CONFLICT (session_id, client_request_id) DO NOTHING
                   RETURNING id, turn_id""",
                steer.accepted.steer_id,
                self._session_id,
                steer.accepted.turn_id,
                steer.client_request_id,
                orjson.dumps(messages).decode(),
            )
            if row is None:
                row = await conn.fetchrow(_FIND, self._session_id, steer.client_request_id)
        assert row is not None
        return _accepted(row)
