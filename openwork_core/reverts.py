"""Reverting turns (issue 26 point 3), the facade the routes call: ``POST …/turns/{tid}/revert``
and ``POST …/unrevert`` run on the session's actor (idle only) with the session's revert rows,
fenced by this daemon's lease on it (``session/revert.py`` says what a revert does)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openwork_core.ids import SessionId, TurnId
from openwork_core.lazy_registry import LazyRegistry
from openwork_core.storage.postgres.reverts import PostgresReverts, reverted_turn_ids
from openwork_core.storage.postgres.store import PostgresStore

if TYPE_CHECKING:
    from openwork_core.session.handle import SessionHandle
    from openwork_core.session.revert import RevertResult


class SessionReverts:
    def __init__(self, store: PostgresStore, sessions: LazyRegistry) -> None:
        self._store = store
        self._sessions = sessions

    async def _loaded(self, session_id: SessionId) -> tuple[SessionHandle, PostgresReverts]:
        await self._store.get_session(session_id)  # 404 for an unknown session
        registry = await self._sessions.registry()
        handle = await registry.load(session_id)
        lease = registry.held_leases().get(session_id)
        return handle, PostgresReverts(self._store.pool, session_id, lease)

    async def revert(self, session_id: SessionId, turn_id: TurnId) -> RevertResult:
        handle, store = await self._loaded(session_id)
        return await handle.revert(turn_id, store)

    async def unrevert(self, session_id: SessionId) -> RevertResult:
        handle, store = await self._loaded(session_id)
        return await handle.revert(None, store)

    async def hidden(self, session_id: SessionId) -> frozenset[TurnId]:
        """The session's reverted turns (the turn list marks them)."""
        async with self._store.pool.acquire() as conn:
            return await reverted_turn_ids(conn, session_id)
