"""The PostgreSQL implementation of the session storage port (``openwork_core.session.storage``):
one object per session over the shared pool; each write is one transaction."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager

import asyncpg

from openwork_chat_state.item import RealOrigin
from openwork_core.ids import ClientRequestId, SessionId, TurnId
from openwork_core.plan import TurnPlan
from openwork_core.session.ownership import SessionLease
from openwork_core.session.storage import OutgoingMessage, TurnClosing, TurnOpening
from openwork_core.storage.codec import encode_content, new_message
from openwork_core.storage.postgres import messages as message_rows
from openwork_core.storage.postgres import sessions as session_rows
from openwork_core.storage.postgres import turns as turn_rows
from openwork_core.storage.postgres import usage as usage_rows
from openwork_core.storage.postgres.agents import insert_agent_message_row
from openwork_core.storage.postgres.compactions import (
    CheckpointRecord,
    CompactionStore,
    NewCheckpoint,
    advance_watermark,
    insert_checkpoint,
)
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.postgres.file_changes import FileChangeStore, rewrite_undone
from openwork_core.storage.postgres.ownership import check_lease
from openwork_core.storage.postgres.plans import check_plan_commit, lock_turn, upsert_turn_plan
from openwork_core.storage.records import NewMessage, StoredMessage, TurnUsage
from openwork_core.storage.usage_records import (
    ModelCallRecord,
    SessionUsageTotals,
    StoredModelCall,
)
from openwork_tools.modes import SandboxMode


def _row(outgoing: OutgoingMessage) -> NewMessage:
    return new_message(outgoing.id, outgoing.message, outgoing.kind, outgoing.artifacts)


def _origin(stored: StoredMessage) -> RealOrigin:
    return RealOrigin(message_id=stored.id, sequence=stored.sequence)


class PostgresSessionStorage:
    """``SessionStorage`` of one session."""

    def __init__(
        self, pool: asyncpg.Pool, session_id: SessionId, lease: SessionLease | None = None
    ) -> None:
        """``lease``: every write checks it in its own transaction (``LeaseLost`` when stale);
        ``None`` writes unfenced (single-process tests)."""
        self._pool = pool
        self._session_id = session_id
        self._lease = lease
        self._compactions = FencedCompactionStore(pool, lease)
        self._file_changes = FencedFileChangeStore(pool, lease)

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[Conn]:
        """One fenced write transaction."""
        async with self._pool.acquire() as conn, conn.transaction():
            if self._lease is not None:
                await check_lease(conn, self._lease)
            yield conn

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def compactions(self) -> FencedCompactionStore:
        return self._compactions

    @property
    def file_changes(self) -> FencedFileChangeStore:
        return self._file_changes

    async def start_turn(
        self, opening: TurnOpening, messages: Sequence[OutgoingMessage]
    ) -> tuple[RealOrigin, ...]:
        async with self._write() as conn:
            await session_rows.lock_session(conn, self._session_id)
            await turn_rows.insert_turn(
                conn,
                turn_id=opening.turn_id,
                session_id=self._session_id,
                client_request_id=opening.client_request_id,
                provider_id=opening.provider_id,
                model_name=opening.model_name,
                app_version=opening.app_version,
            )
            stored = await message_rows.insert_messages(
                conn, self._session_id, opening.turn_id, [_row(m) for m in messages]
            )
        return tuple(_origin(s) for s in stored)

    async def append(
        self, turn_id: TurnId, messages: Sequence[OutgoingMessage]
    ) -> tuple[RealOrigin, ...]:
        async with self._write() as conn:
            stored = await message_rows.insert_messages(
                conn, self._session_id, turn_id, [_row(m) for m in messages]
            )
        return tuple(_origin(s) for s in stored)

    async def append_assistant(
        self,
        turn_id: TurnId,
        message: OutgoingMessage,
        *,
        usage: TurnUsage,
        tool_calls: int,
        call: ModelCallRecord | None = None,
    ) -> RealOrigin:
        async with self._write() as conn:
            (stored,) = await message_rows.insert_messages(
                conn, self._session_id, turn_id, (_row(message),)
            )
            await turn_rows.add_response_counters(conn, turn_id, usage, tool_calls)
            if call is not None:
                await usage_rows.insert_model_call(conn, self._session_id, turn_id, stored.id, call)
        return _origin(stored)

    async def last_model_call(self) -> StoredModelCall | None:
        async with self._pool.acquire() as conn:
            return await usage_rows.last_model_call(conn, self._session_id)

    async def turn_model_calls(self, turn_id: TurnId) -> list[StoredModelCall]:
        async with self._pool.acquire() as conn:
            return await usage_rows.turn_model_calls(conn, turn_id)

    async def usage_totals(self) -> SessionUsageTotals:
        async with self._pool.acquire() as conn:
            return await usage_rows.session_usage_totals(conn, self._session_id)

    async def commit_plan_update(
        self, turn_id: TurnId, plan: TurnPlan, message: OutgoingMessage
    ) -> RealOrigin:
        row = _row(message)
        check_plan_commit(turn_id, plan, row)
        async with self._write() as conn:
            await session_rows.lock_session(conn, self._session_id)  # every write's lock order
            await lock_turn(conn, self._session_id, turn_id)
            await upsert_turn_plan(conn, plan)
            (stored,) = await message_rows.insert_messages(conn, self._session_id, turn_id, (row,))
        return _origin(stored)

    async def append_agent_messages(
        self, turn_id: TurnId, messages: Sequence[OutgoingMessage]
    ) -> tuple[RealOrigin | None, ...]:
        if not messages:
            return ()
        origins: list[RealOrigin | None] = []
        async with self._write() as conn:
            for message in messages:
                stored = await insert_agent_message_row(
                    conn, self._session_id, turn_id, message.id, encode_content(message.message)
                )
                origins.append(None if stored is None else _origin(stored))
        return tuple(origins)

    async def record_submission(self, turn_id: TurnId, model_call_index: int) -> None:
        async with self._write() as conn:
            await turn_rows.record_submission(conn, turn_id, model_call_index)

    async def finish_turn(self, turn_id: TurnId, closing: TurnClosing) -> None:
        async with self._write() as conn:
            await turn_rows.finish_turn(
                conn,
                turn_id,
                closing.status,
                error_code=closing.error_code,
                error_message=closing.error_message,
                plan_unfinished_step_count=closing.plan_unfinished_step_count,
            )

    async def turn_for_client_request(self, client_request_id: ClientRequestId) -> TurnId | None:
        async with self._pool.acquire() as conn:
            row = await turn_rows.fetch_turn_by_client_request(
                conn, self._session_id, client_request_id
            )
        return None if row is None else row.id

    async def set_sandbox_mode(self, mode: SandboxMode) -> None:
        async with self._write() as conn:
            await session_rows.update_sandbox_mode(conn, self._session_id, mode)


class FencedCompactionStore(CompactionStore):
    """The compaction family with the session's lease checked in each writing transaction."""

    def __init__(self, pool: asyncpg.Pool, lease: SessionLease | None) -> None:
        super().__init__(pool)
        self._lease = lease

    async def insert_checkpoint(self, new: NewCheckpoint) -> CheckpointRecord:
        async with self._pool.acquire() as conn, conn.transaction():
            if self._lease is not None:
                await check_lease(conn, self._lease)
            return await insert_checkpoint(conn, new)

    async def advance_watermark(self, session_id: SessionId, sequence: int) -> int:
        async with self._pool.acquire() as conn, conn.transaction():
            if self._lease is not None:
                await check_lease(conn, self._lease)
            return await advance_watermark(conn, session_id, sequence)


class FencedFileChangeStore(FileChangeStore):
    """File-change flags with the session's lease checked before the rewrite."""

    def __init__(self, pool: asyncpg.Pool, lease: SessionLease | None) -> None:
        super().__init__(pool)
        self._lease = lease

    async def set_undone(self, session_id: SessionId, undone: Mapping[str, bool]) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            if self._lease is not None:
                await check_lease(conn, self._lease)
            await rewrite_undone(conn, session_id, undone)
