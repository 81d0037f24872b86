"""``turn_steers`` rows (migration 0014; issue 26 point 1): a steer's row commits before its 202,
with the user messages it carries, unique per session and client request id."""

from __future__ import annotations

import asyncpg
import orjson

from openwork_core.ids import ClientRequestId, SessionId, SteerId, TurnId
from openwork_core.session.ownership import SessionLease
from openwork_core.session.runner.steering import Steer, SteerAccepted
from openwork_core.storage.codec import encode_content
from openwork_core.storage.postgres.ownership import check_lease

_FIND = """SELECT id, turn_id FROM turn_steers WHERE session_id = $1 AND client_request_id = $2"""


def _accepted(row: asyncpg.Record) -> SteerAccepted:
    return SteerAccepted(TurnId(row["turn_id"]), SteerId(row["id"]))


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
