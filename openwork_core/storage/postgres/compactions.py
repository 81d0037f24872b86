"""``conversation_compactions`` and the reads compaction needs (compaction.md §6, §8; storage.md
§2). Messages are never deleted. ``insert_checkpoint`` runs the §6 checks under the session row
lock and computes the boundaries there; ``load_projection`` reads what §8.1 needs in one snapshot
(the compaction package builds the synthetic items)."""

from __future__ import annotations

import asyncpg

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import Role
from openwork_core.ids import CompactionId, SessionId
from openwork_core.storage.compaction_records import (
    CHECKPOINT_FORMAT_VERSION,
    RUNTIME_REMINDER_FORMAT_VERSION,
    SUMMARY_FORMAT_VERSION,
    TRANSCRIPT_DEFAULT_LIMIT,
    TRANSCRIPT_MAX_LIMIT,
    CheckpointCheckFailed,
    CheckpointRecord,
    CompactionKind,
    NewCheckpoint,
    NoCheckpoint,
    ProjectionRows,
    SessionMessageContents,
    TranscriptPage,
    TranscriptQueryInvalid,
)
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.postgres import messages as message_rows
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.postgres.reverts import without_reverted
from openwork_core.storage.postgres.sessions import fetch_session, lock_session
from openwork_core.storage.postgres.steady_statements import steady
from openwork_core.storage.records import StoredMessage, TurnStatus

_COLUMNS = """id, session_id, sequence, kind, through_message_sequence,
    replaced_through_message_sequence, source_message_count, checkpoint_format_version,
    summary_format_version, last_user_message_id, last_user_message_sequence,
    resolved_model_name, summary, runtime_state::text AS runtime_state,
    runtime_reminder_format_version, runtime_reminder, trigger_turn_id, parent_compaction_id,
    input_tokens, output_tokens, created_at"""


def _row(row: asyncpg.Record) -> CheckpointRecord:
    values = dict(row.items())
    values["kind"] = CompactionKind(values["kind"])
    return CheckpointRecord(**values)


LATEST_CHECKPOINT = steady(f"""SELECT {_COLUMNS} FROM conversation_compactions WHERE session_id = $1
    ORDER BY sequence DESC LIMIT 1""")


async def fetch_latest_checkpoint(conn: Conn, session_id: SessionId) -> CheckpointRecord | None:
    row = await conn.fetchrow(LATEST_CHECKPOINT, session_id)
    return None if row is None else _row(row)


async def fetch_checkpoint(
    conn: Conn, session_id: SessionId, compaction_id: CompactionId
) -> CheckpointRecord:
    row = await conn.fetchrow(
        f"SELECT {_COLUMNS} FROM conversation_compactions WHERE session_id = $1 AND id = $2",
        session_id,
        compaction_id,
    )
    if row is None:
        raise RecordNotFound(f"unknown compaction checkpoint: {compaction_id}")
    return _row(row)


async def _check_turn_state(conn: Conn, new: NewCheckpoint) -> None:
    running = await conn.fetchval(
        "SELECT id FROM turns WHERE session_id = $1 AND status = $2",
        new.session_id,
        TurnStatus.RUNNING.value,
    )
    if new.kind in (CompactionKind.MANUAL, CompactionKind.REWIND):
        if new.trigger_turn_id is not None:
            raise CheckpointCheckFailed(f"a {new.kind} compaction has no trigger turn")
        if running is not None:
            raise CheckpointCheckFailed(f"the session has a running turn: {running}")
        return
    if new.trigger_turn_id is None:
        raise CheckpointCheckFailed(f"a {new.kind} compaction needs its trigger turn")
    if running != new.trigger_turn_id:
        raise CheckpointCheckFailed(
            f"trigger turn {new.trigger_turn_id} is not running in session {new.session_id}"
        )


async def _fact_boundary(conn: Conn, new: NewCheckpoint, max_sequence: int) -> int:
    if new.kind is not CompactionKind.REWIND:
        if new.parent_compaction_id is not None or new.rewind_through_message_sequence is not None:
            raise CheckpointCheckFailed(f"a {new.kind} compaction has no parent checkpoint")
        return max_sequence
    if new.parent_compaction_id is None or new.rewind_through_message_sequence is None:
        raise CheckpointCheckFailed("a rewind needs its target checkpoint and fact boundary")
    try:
        parent = await fetch_checkpoint(conn, new.session_id, new.parent_compaction_id)
    except RecordNotFound as exc:
        raise CheckpointCheckFailed(str(exc)) from exc
    if parent.through_message_sequence != new.rewind_through_message_sequence:
        raise CheckpointCheckFailed("a rewind keeps its target's fact boundary")
    return parent.through_message_sequence


async def _check_replayed(conn: Conn, new: NewCheckpoint, through: int) -> None:
    sequence = await conn.fetchval(
        """SELECT sequence FROM messages WHERE id = $1 AND session_id = $2 AND role = $3
           AND message_kind = $4""",
        new.last_user_message_id,
        new.session_id,
        Role.USER.value,
        MessageKind.NORMAL.value,
    )
    if sequence is None:
        raise CheckpointCheckFailed(
            f"replayed message {new.last_user_message_id} is not a user request of this session"
        )
    if sequence != new.last_user_message_sequence or sequence > through:
        raise CheckpointCheckFailed("the replayed message is not at or below the fact boundary")


async def insert_checkpoint(conn: Conn, new: NewCheckpoint) -> CheckpointRecord:
    """Check §6 and insert, in one transaction holding the session row lock."""
    async with conn.transaction():
        await lock_session(conn, new.session_id)
        await _check_turn_state(conn, new)
        max_sequence: int = await conn.fetchval(
            "SELECT COALESCE(MAX(sequence), 0) FROM messages WHERE session_id = $1", new.session_id
        )
        if max_sequence == 0:
            raise CheckpointCheckFailed("the session has no message")
        if new.expected_max_sequence is not None and new.expected_max_sequence != max_sequence:
            raise CheckpointCheckFailed(f"messages changed since the read (now {max_sequence})")
        through = await _fact_boundary(conn, new, max_sequence)
        await _check_replayed(conn, new, through)
        values = {
            "id": new.id,
            "session_id": new.session_id,
            "through_message_sequence": through,
            "replaced_through_message_sequence": max_sequence,
            "source_message_count": new.source_message_count,
            "checkpoint_format_version": CHECKPOINT_FORMAT_VERSION,
            "kind": new.kind.value,
            "summary_format_version": SUMMARY_FORMAT_VERSION,
            "last_user_message_id": new.last_user_message_id,
            "last_user_message_sequence": new.last_user_message_sequence,
            "resolved_model_name": new.resolved_model_name,
            "summary": new.summary,
            "runtime_state": new.runtime_state,
            "runtime_reminder_format_version": RUNTIME_REMINDER_FORMAT_VERSION,
            "runtime_reminder": new.runtime_reminder,
            "trigger_turn_id": new.trigger_turn_id,
            "parent_compaction_id": new.parent_compaction_id,
            "input_tokens": new.input_tokens,
            "output_tokens": new.output_tokens,
        }
        placeholders = ", ".join(f"${n}" for n in range(1, len(values) + 1))
        row = await conn.fetchrow(
            f"""INSERT INTO conversation_compactions ({", ".join(values)}, sequence)
                VALUES ({placeholders}, (SELECT COALESCE(MAX(sequence), 0) + 1
                    FROM conversation_compactions WHERE session_id = $2))
                RETURNING {_COLUMNS}""",
            *values.values(),
        )
        assert row is not None
        return _row(row)


async def _fetch_replayed(
    conn: Conn, session_id: SessionId, checkpoint: CheckpointRecord
) -> StoredMessage | None:
    sequence = checkpoint.last_user_message_sequence
    if sequence is None:
        return None
    found = await message_rows.fetch_session_messages(
        conn, session_id, after_sequence=sequence - 1, limit=1
    )
    if not found or found[0].id != checkpoint.last_user_message_id:
        return None
    return found[0]


async def load_projection(conn: Conn, session_id: SessionId) -> ProjectionRows:
    """§8.1 reads in one repeatable-read snapshot."""
    async with conn.transaction(isolation="repeatable_read", readonly=True):
        session = await fetch_session(conn, session_id)
        checkpoint = await fetch_latest_checkpoint(conn, session_id)
        replayed: StoredMessage | None = None
        after = 0
        if checkpoint is not None:
            after = checkpoint.replaced_through_message_sequence
            replayed = await _fetch_replayed(conn, session_id, checkpoint)
        raw = await message_rows.fetch_session_messages(conn, session_id, after_sequence=after)
        return ProjectionRows(
            checkpoint=checkpoint,
            replayed=replayed,
            raw=await without_reverted(conn, session_id, raw),  # issue 26 point 3
            watermark=session.tool_result_pruned_through_sequence,
        )


async def advance_watermark(conn: Conn, session_id: SessionId, sequence: int) -> int:
    """Move the pruning watermark forward only (GREATEST); returns the stored value."""
    if sequence <= 0:
        raise ValueError("the pruning watermark is a message sequence (> 0)")
    value = await conn.fetchval(
        """UPDATE sessions SET tool_result_pruned_through_sequence =
               GREATEST(tool_result_pruned_through_sequence, $2::bigint)
           WHERE id = $1 RETURNING tool_result_pruned_through_sequence""",
        session_id,
        sequence,
    )
    if value is None:
        raise RecordNotFound(f"unknown session: {session_id}")
    return int(value)


async def session_message_contents(conn: Conn, session_id: SessionId) -> SessionMessageContents:
    rows = await message_rows.fetch_session_messages(conn, session_id)
    return SessionMessageContents(
        max_sequence=rows[-1].sequence if rows else 0, contents=tuple(r.content for r in rows)
    )


async def read_transcript(
    conn: Conn,
    session_id: SessionId,
    compaction_id: CompactionId | None = None,
    after_sequence: int = 0,
    limit: int = TRANSCRIPT_DEFAULT_LIMIT,
) -> TranscriptPage:
    """§8.4: raw messages covered by a checkpoint, never past its fact boundary."""
    if not 1 <= limit <= TRANSCRIPT_MAX_LIMIT:
        raise TranscriptQueryInvalid(f"limit must be between 1 and {TRANSCRIPT_MAX_LIMIT}")
    if after_sequence < 0:
        raise TranscriptQueryInvalid("afterSequence must not be negative")
    if compaction_id is None:
        checkpoint = await fetch_latest_checkpoint(conn, session_id)
        if checkpoint is None:
            raise NoCheckpoint(f"session {session_id} has no compaction checkpoint")
    else:
        checkpoint = await fetch_checkpoint(conn, session_id, compaction_id)
    fetched = await message_rows.fetch_session_messages(
        conn, session_id, after_sequence=after_sequence, limit=limit + 1
    )
    rows = [m for m in fetched if m.sequence <= checkpoint.through_message_sequence]
    page = tuple(rows[:limit])
    return TranscriptPage(
        compaction_id=checkpoint.id,
        through_message_sequence=checkpoint.through_message_sequence,
        messages=page,
        has_more=len(rows) > limit,
        next_after_sequence=page[-1].sequence if page else after_sequence,
    )


class CompactionStore:
    """The facade the compaction package uses: one pool, one transaction per method."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def insert_checkpoint(self, new: NewCheckpoint) -> CheckpointRecord:
        async with self._pool.acquire() as conn:
            return await insert_checkpoint(conn, new)

    async def latest_checkpoint(self, session_id: SessionId) -> CheckpointRecord | None:
        async with self._pool.acquire() as conn:
            return await fetch_latest_checkpoint(conn, session_id)

    async def get_checkpoint(
        self, session_id: SessionId, compaction_id: CompactionId
    ) -> CheckpointRecord:
        async with self._pool.acquire() as conn:
            return await fetch_checkpoint(conn, session_id, compaction_id)

    async def load_projection(self, session_id: SessionId) -> ProjectionRows:
        async with self._pool.acquire() as conn:
            return await load_projection(conn, session_id)

    async def replayed_message(self, checkpoint: CheckpointRecord) -> StoredMessage | None:
        async with self._pool.acquire() as conn:
            return await _fetch_replayed(conn, checkpoint.session_id, checkpoint)

    async def advance_watermark(self, session_id: SessionId, sequence: int) -> int:
        async with self._pool.acquire() as conn:
            return await advance_watermark(conn, session_id, sequence)

    async def all_session_message_contents(self, session_id: SessionId) -> SessionMessageContents:
        async with self._pool.acquire() as conn:
            return await session_message_contents(conn, session_id)

    async def read_transcript(
        self,
        session_id: SessionId,
        compaction_id: CompactionId | None = None,
        after_sequence: int = 0,
        limit: int = TRANSCRIPT_DEFAULT_LIMIT,
    ) -> TranscriptPage:
        async with self._pool.acquire() as conn:
            return await read_transcript(conn, session_id, compaction_id, after_sequence, limit)


__all__ = [
    "CHECKPOINT_FORMAT_VERSION",
    "RUNTIME_REMINDER_FORMAT_VERSION",
    "SUMMARY_FORMAT_VERSION",
    "TRANSCRIPT_DEFAULT_LIMIT",
    "TRANSCRIPT_MAX_LIMIT",
    "CheckpointCheckFailed",
    "CheckpointRecord",
    "CompactionKind",
    "CompactionStore",
    "NewCheckpoint",
    "NoCheckpoint",
    "ProjectionRows",
    "SessionMessageContents",
    "TranscriptPage",
    "TranscriptQueryInvalid",
    "advance_watermark",
    "fetch_checkpoint",
    "fetch_latest_checkpoint",
    "insert_checkpoint",
    "load_projection",
    "read_transcript",
    "session_message_contents",
]
