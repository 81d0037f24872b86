"""The PostgreSQL implementation of the session storage port (``openwork_core.session.storage``):
one object per session over the shared pool; each write is one transaction.

Every ``append`` of a model step (the runner's ``StepWriter``: an effect-free response with its
tool results and the next submission's counter; else the response, then each result; World
State; a lone counter) is one statement (``fenced.write_fenced``): lease check, rows and turn
counters together, outside any explicit transaction. Message sequences are assigned here, by the
session's owner, from the last sequence this object wrote (docs/architecture.md "Sequences");
any failed or unknown-outcome write forgets it, and the next write re-reads it in its statement."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

import asyncpg

from openwork_chat_state.item import RealOrigin
from openwork_core.ids import ClientRequestId, SessionId, TurnId
from openwork_core.session.ownership import SessionLease
from openwork_core.session.storage import OutgoingMessage, StepWrite, TurnClosing, TurnOpening
from openwork_core.storage.codec import new_message
from openwork_core.storage.postgres import sessions as session_rows
from openwork_core.storage.postgres import turn_warnings as warning_rows
from openwork_core.storage.postgres import turns as turn_rows
from openwork_core.storage.postgres import usage as usage_rows
from openwork_core.storage.postgres.compactions import (
    CheckpointRecord,
    CompactionStore,
    NewCheckpoint,
    advance_watermark,
    insert_checkpoint,
)
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.postgres.fenced import (
    SEQUENCE_CONSTRAINT,
    FencedWrite,
    TurnCounters,
    finish_fenced,
    write_fenced,
)
from openwork_core.storage.postgres.file_changes import FileChangeStore, rewrite_undone
from openwork_core.storage.postgres.ownership import check_lease
from openwork_core.storage.postgres.plans import lock_turn, upsert_turn_plan
from openwork_core.storage.records import NewMessage, TurnWarningRecord
from openwork_core.storage.usage_records import (
    SessionUsageTotals,
    StoredModelCall,
)
from openwork_tools.modes import SandboxMode


def _row(outgoing: OutgoingMessage) -> NewMessage:
    return new_message(outgoing.id, outgoing.message, outgoing.kind, outgoing.artifacts)


def _origins(rows: Sequence[NewMessage], written: FencedWrite) -> tuple[RealOrigin, ...]:
    return tuple(RealOrigin(message_id=r.id, sequence=written.sequences[r.id]) for r in rows)


@dataclass(slots=True)
class _Sequencing:
    """One message write's view of the in-memory sequence: ``after`` going in (``None`` =
    unknown, the statement reads it), the write's ``last_inserted`` coming out."""

    after: int | None
    last_inserted: int | None = None


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
        self._last_sequence: int | None = None
        """The highest message sequence of this session, as this owner wrote it; ``None`` until
        the first write after load and after any failed or unknown-outcome write."""
        self._sequence_lock = asyncio.Lock()

    @asynccontextmanager
    async def _sequenced(self) -> AsyncIterator[_Sequencing]:
        """Serialises this session's message writes; the in-memory sequence moves only after the
        write committed (the caller leaves the block after its commit) and is forgotten on any
        failure or cancellation, when the outcome is unknown."""
        async with self._sequence_lock:
            sequencing = _Sequencing(after=self._last_sequence)
            try:
                yield sequencing
            except BaseException:
                self._last_sequence = None
                raise
            if sequencing.last_inserted is not None:
                self._last_sequence = sequencing.last_inserted

    async def _write_messages(
        self,
        turn_id: TurnId,
        rows: Sequence[NewMessage],
        counters: TurnCounters | None = None,
        *,
        fresh: bool = False,
    ) -> tuple[RealOrigin, ...]:
        """One fenced statement (``fresh``: every row's id is new). A sequence another writer
        took meanwhile (a unique violation on ``messages_session_sequence``) is re-read and the
        statement retried once."""
        async with self._sequenced() as sequencing:
            for attempt in (1, 2):
                try:
                    async with self._pool.acquire() as conn:
                        written = await self._fenced_in(
                            conn, sequencing, turn_id, rows, counters, fresh=fresh
                        )
                except asyncpg.UniqueViolationError as exc:
                    if attempt == 2 or exc.constraint_name != SEQUENCE_CONSTRAINT:
                        raise
                    sequencing.after = None
                    continue
                return _origins(rows, written)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _fenced_in(
        self,
        conn: Conn,
        sequencing: _Sequencing,
        turn_id: TurnId,
        rows: Sequence[NewMessage],
        counters: TurnCounters | None = None,
        *,
        fresh: bool = False,
    ) -> FencedWrite:
        """One ``write_fenced`` on ``conn`` after the sequence ``sequencing`` knows; the highest
        sequence it inserted is what ``_sequenced`` keeps once the block commits."""
        written = await write_fenced(
            conn,
            session_id=self._session_id,
            turn_id=turn_id,
            lease=self._lease,
            after=sequencing.after,
            rows=rows,
            counters=counters,
            fresh=fresh,
        )
        sequencing.last_inserted = written.last_inserted
        return written

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
        async with self._sequenced() as sequencing:
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
                rows = [_row(m) for m in messages]
                written = await self._fenced_in(conn, sequencing, opening.turn_id, rows)
            return _origins(rows, written)

    async def append(self, turn_id: TurnId, step: StepWrite) -> tuple[RealOrigin, ...]:
        """One fenced statement; a step with a plan is one transaction in the lock order of
        every message write (session, then turn)."""
        step.check_turn(turn_id)
        rows = [_row(m) for m in step.messages]
        counters = (
            None
            if step.response is None and step.submission is None
            else TurnCounters(
                call=step.response, tool_calls=step.tool_calls, submission=step.submission
            )
        )
        if step.plan is None:
            fresh = step.response is not None
            return await self._write_messages(turn_id, rows, counters, fresh=fresh)
        async with self._sequenced() as sequencing:
            async with self._write() as conn:
                await session_rows.lock_session(conn, self._session_id)
                await lock_turn(conn, self._session_id, turn_id)
                await upsert_turn_plan(conn, step.plan)
                written = await self._fenced_in(conn, sequencing, turn_id, rows, counters)
            return _origins(rows, written)

    async def last_model_call(self) -> StoredModelCall | None:
        async with self._pool.acquire() as conn:
            return await usage_rows.last_model_call(conn, self._session_id)

    async def turn_model_calls(self, turn_id: TurnId) -> list[StoredModelCall]:
        async with self._pool.acquire() as conn:
            return await usage_rows.turn_model_calls(conn, turn_id)

    async def usage_totals(self) -> SessionUsageTotals:
        async with self._pool.acquire() as conn:
            return await usage_rows.session_usage_totals(conn, self._session_id)

    async def append_agent_messages(
        self, turn_id: TurnId, messages: Sequence[OutgoingMessage]
    ) -> tuple[RealOrigin | None, ...]:
        if not messages:
            return ()
        rows = [_row(m) for m in messages]
        async with self._sequenced() as sequencing, self._pool.acquire() as conn:
            written = await self._fenced_in(conn, sequencing, turn_id, rows)
        # an id already stored is dropped (ON CONFLICT (id) DO NOTHING, multi-agent.md §6)
        origins = {
            r.id: RealOrigin(message_id=r.id, sequence=written.sequences[r.id])
            for r in rows
            if r.id in written.inserted
        }
        return tuple(origins.get(m.id) for m in messages)

    async def record_turn_warning(self, turn_id: TurnId, warning: TurnWarningRecord) -> None:
        async with self._write() as conn:
            await warning_rows.insert_turn_warning(conn, turn_id, warning)

    async def finish_turn(self, turn_id: TurnId, closing: TurnClosing) -> None:
        """One fenced statement (the turn's end is on every turn's path)."""
        async with self._pool.acquire() as conn:
            await finish_fenced(
                conn, session_id=self._session_id, turn_id=turn_id, lease=self._lease, end=closing
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
