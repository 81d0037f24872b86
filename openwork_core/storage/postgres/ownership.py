"""``daemons`` and ``session_leases`` (migration 0006): registration, leases with a fencing
epoch, renewal, and restart correction that never touches a live daemon's turns."""

from __future__ import annotations

import asyncpg

from openwork_core.ids import SessionId
from openwork_core.session.ownership import (
    DaemonIdentity,
    LeaseHolder,
    LeaseLost,
    SessionLease,
)
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.postgres.turns import RESTART_ERROR_CODE, RESTART_ERROR_MESSAGE

_INTERRUPT_TURNS = """
    UPDATE turns SET status = 'interrupted', error_code = $1, error_message = $2,
                     ended_at = GREATEST(now(), started_at), updated_at = now()
    WHERE status = 'running' AND {where}
    RETURNING id"""

_UNKNOWN_SPANS = """
    UPDATE trace_spans SET status = 'outcome_unknown', error_code = $1,
                           ended_at = GREATEST(now(), started_at)
    WHERE status = 'running' AND turn_id = ANY($2::text[])"""

_NOT_LIVE_ELSEWHERE = """NOT EXISTS (
    SELECT 1 FROM session_leases l
    WHERE l.session_id = turns.session_id AND l.expires_at > now() AND l.owner_daemon_id <> $3)"""


CHECK_LEASE = """SELECT owner_daemon_id, epoch, expires_at > now() AS live FROM session_leases
    WHERE session_id = $1 FOR SHARE"""
LEASE_FOR_UPDATE = """SELECT l.owner_daemon_id, l.expires_at > now() AS live, d.url
    FROM session_leases l JOIN daemons d ON d.id = l.owner_daemon_id
    WHERE l.session_id = $1 FOR UPDATE OF l"""
TAKE_LEASE = """WITH raised AS (
        UPDATE sessions SET lease_epoch = lease_epoch + 1 WHERE id = $1 RETURNING lease_epoch)
    INSERT INTO session_leases (session_id, owner_daemon_id, epoch, expires_at)
    SELECT $1, $2, lease_epoch, now() + make_interval(secs => $3) FROM raised
    ON CONFLICT (session_id) DO UPDATE SET
        owner_daemon_id = EXCLUDED.owner_daemon_id,
        epoch = EXCLUDED.epoch,
        acquired_at = now(),
        expires_at = EXCLUDED.expires_at
    RETURNING epoch"""
"""A new epoch, one above the last one the session ever had (``sessions.lease_epoch``, migration
0013): epochs never repeat, even after a lease row was given back and deleted."""
INTERRUPT_SESSION_TURNS = _INTERRUPT_TURNS.format(where="session_id = $3")
"""Taking a lease interrupts the session's leftover running turn (``acquire``)."""
_INTERRUPT_ORPHANED_TURNS = _INTERRUPT_TURNS.format(where=_NOT_LIVE_ELSEWHERE)
"""At registration: the running turns of sessions no other daemon holds a live lease on."""


async def _interrupt(conn: Conn, statement: str, *args: object) -> int:
    """Run one of the two ``_INTERRUPT_TURNS`` forms and mark the turns' running spans."""
    rows = await conn.fetch(statement, RESTART_ERROR_CODE, RESTART_ERROR_MESSAGE, *args)
    turn_ids = [r["id"] for r in rows]
    if turn_ids:
        await conn.execute(_UNKNOWN_SPANS, RESTART_ERROR_CODE, turn_ids)
    return len(turn_ids)


async def check_lease(conn: Conn, lease: SessionLease) -> None:
    """Inside a writing transaction: lock the session's lease row (``FOR SHARE``, so a takeover
    waits for this commit) and refuse the write unless ``lease`` is still current and live."""
    row = await conn.fetchrow(CHECK_LEASE, lease.session_id)
    if row is None or row["owner_daemon_id"] != lease.daemon_id or row["epoch"] != lease.epoch:
        raise LeaseLost(f"session {lease.session_id}: this daemon no longer owns it")
    if not row["live"]:
        raise LeaseLost(f"session {lease.session_id}: the lease expired before this write")


class PostgresOwnership:
    """``OwnershipStorage`` of one daemon."""

    def __init__(self, pool: asyncpg.Pool, identity: DaemonIdentity, lease_seconds: float) -> None:
        self._pool = pool
        self._identity = identity
        self._lease_seconds = lease_seconds

    @property
    def identity(self) -> DaemonIdentity:
        return self._identity

    async def register(self) -> int:
        me = self._identity
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(
                """INSERT INTO daemons (id, url, pid, host, home) VALUES ($1, $2, $3, $4, $5)""",
                me.id,
                me.url,
                me.pid,
                me.host,
                me.home,
            )
            gone = await conn.fetch(
                """UPDATE daemons SET stopped_at = now()
                   WHERE host = $1 AND home = $2 AND id <> $3 AND stopped_at IS NULL
                   RETURNING id""",
                me.host,
                me.home,
                me.id,
            )
            if gone:
                await conn.execute(
                    "DELETE FROM session_leases WHERE owner_daemon_id = ANY($1::text[])",
                    [r["id"] for r in gone],
                )
            return await _interrupt(conn, _INTERRUPT_ORPHANED_TURNS, me.id)

    async def acquire(self, session_id: SessionId) -> SessionLease | LeaseHolder:
        me = self._identity.id
        async with self._pool.acquire() as conn, conn.transaction():
            current = await conn.fetchrow(LEASE_FOR_UPDATE, session_id)
            if current is not None and current["live"] and current["owner_daemon_id"] != me:
                return LeaseHolder(daemon_id=current["owner_daemon_id"], url=current["url"])
            epoch = await conn.fetchval(TAKE_LEASE, session_id, me, self._lease_seconds)
            if epoch is None:
                raise RecordNotFound(f"session {session_id} was deleted")
            # nobody in any live process drives this session now: its running turn is a leftover
            await _interrupt(conn, INTERRUPT_SESSION_TURNS, session_id)
            return SessionLease(session_id=session_id, daemon_id=me, epoch=int(epoch))

    async def holder(self, session_id: SessionId) -> LeaseHolder | None:
        async with self._pool.acquire() as conn:
            row = await conn.fetchrow(
                """SELECT l.owner_daemon_id, d.url FROM session_leases l
                   JOIN daemons d ON d.id = l.owner_daemon_id
                   WHERE l.session_id = $1 AND l.expires_at > now() AND l.owner_daemon_id <> $2""",
                session_id,
                self._identity.id,
            )
        return (
            None if row is None else LeaseHolder(daemon_id=row["owner_daemon_id"], url=row["url"])
        )

    async def last_epoch(self, session_id: SessionId) -> int:
        async with self._pool.acquire() as conn:
            epoch = await conn.fetchval(
                "SELECT lease_epoch FROM sessions WHERE id = $1", session_id
            )
        return 0 if epoch is None else int(epoch)

    async def renew(self) -> frozenset[SessionId]:
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "UPDATE daemons SET heartbeat_at = now() WHERE id = $1", self._identity.id
            )
            rows = await conn.fetch(
                """UPDATE session_leases SET expires_at = now() + make_interval(secs => $2)
                   WHERE owner_daemon_id = $1 RETURNING session_id""",
                self._identity.id,
                self._lease_seconds,
            )
        return frozenset(r["session_id"] for r in rows)

    async def release(self, lease: SessionLease) -> None:
        async with self._pool.acquire() as conn:
            await conn.execute(
                """DELETE FROM session_leases
                   WHERE session_id = $1 AND owner_daemon_id = $2 AND epoch = $3""",
                lease.session_id,
                lease.daemon_id,
                lease.epoch,
            )

    async def stop(self) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "DELETE FROM session_leases WHERE owner_daemon_id = $1", self._identity.id
            )
            await conn.execute(
                "UPDATE daemons SET stopped_at = now() WHERE id = $1", self._identity.id
            )
