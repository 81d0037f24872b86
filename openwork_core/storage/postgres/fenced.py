"""One-statement fenced writes (issue 13, point 2): the session lease check, the message rows
with sequences the session's owner assigns, and the turn's counters, in one SQL statement.

A single statement is its own transaction: it either writes everything or nothing. The lease
row is read ``FOR SHARE`` in the statement's first CTE, so a takeover (``acquire`` locks the row
``FOR UPDATE``) waits for this write's commit exactly as it did for ``check_lease`` in an
explicit transaction; every data-modifying CTE is conditioned on that lease being this
daemon's, at this epoch, and live, so a stale owner writes nothing and learns why.

Sequences: the caller passes the last sequence it knows (``after``); ``None`` makes the
statement read ``MAX(sequence)`` itself (after load, and after a failed or unknown-outcome
write). Rows whose id already exists (deterministic World State and agent-message ids) are not
written again and take no sequence, so sequences stay gapless; their stored origins come back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from openwork_core.ids import MessageId, SessionId, TurnId
from openwork_core.session.ownership import LeaseLost, SessionLease
from openwork_core.session.storage import TurnClosing
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.postgres.steady_statements import steady
from openwork_core.storage.postgres.turns import add_tokens
from openwork_core.storage.records import NewMessage
from openwork_core.storage.usage_records import ModelCallRecord

SEQUENCE_CONSTRAINT = "messages_session_sequence"
"""The unique constraint a write with a stale in-memory sequence runs into."""

_LEASE = """lease AS (
        SELECT owner_daemon_id = $2::text AND epoch = $3::bigint AS ours, expires_at > now() AS live
        FROM session_leases WHERE session_id = $1 FOR SHARE),
    fence AS (SELECT 1 FROM lease WHERE ours AND live)"""

_NO_LEASE = """lease AS (SELECT true AS ours, true AS live WHERE $2::text IS NULL
                                                      OR $3::bigint IS NOT NULL),
    fence AS (SELECT 1)"""

_ROWS = """incoming AS (
        SELECT t.id, t.role, t.content, t.call_id, t.tool_name, t.kind, t.ord
        FROM unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
             WITH ORDINALITY AS t(id, role, content, call_id, tool_name, kind, ord)),
    existing AS (
        SELECT m.id, m.sequence FROM messages m JOIN incoming i ON i.id = m.id),
    numbered AS (
        SELECT i.*, COALESCE($5::bigint,
                             (SELECT MAX(sequence) FROM messages WHERE session_id = $1), 0)
                    + row_number() OVER (ORDER BY i.ord) AS sequence
        FROM incoming i WHERE NOT EXISTS (SELECT 1 FROM existing e WHERE e.id = i.id)),
    inserted AS (
        INSERT INTO messages (id, session_id, turn_id, sequence, role, content,
                              provider_call_id, tool_name, message_kind)
        SELECT id, $1, $4, sequence, role, content::jsonb, call_id, tool_name, kind
        FROM numbered WHERE EXISTS (SELECT 1 FROM fence)
        RETURNING id, sequence)"""

_FRESH_ROWS = """inserted AS (
        INSERT INTO messages (id, session_id, turn_id, sequence, role, content,
                              provider_call_id, tool_name, message_kind)
        SELECT t.id, $1, $4,
               COALESCE($5::bigint,
                        (SELECT MAX(sequence) FROM messages WHERE session_id = $1), 0) + t.ord,
               t.role, t.content::jsonb, t.call_id, t.tool_name, t.kind
        FROM unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
             WITH ORDINALITY AS t(id, role, content, call_id, tool_name, kind, ord)
        WHERE EXISTS (SELECT 1 FROM fence)
        RETURNING sequence)"""
"""Rows with new ids (``new_message_id``: the runner's assistant messages and tool results):
no lookup of stored ids, each row numbered by its position; a stored id would be a primary-key
violation, never a silent skip."""

_COUNTERS = f""",
    counted AS (
        UPDATE turns SET {add_tokens(12, 13, 14, 15, 19)},
            tool_call_count = tool_call_count + $16,
            model_call_count = GREATEST(model_call_count, $17),
            model_submission_count = model_submission_count + $18,
            updated_at = now()
        WHERE id = $4 AND session_id = $1 AND EXISTS (SELECT 1 FROM fence)
        RETURNING 1)"""

_CALL = """,
    recorded AS (
        INSERT INTO model_call_usage (session_id, turn_id, model_call, submission, message_id,
               provider_id, model_name, input_tokens, cached_input_tokens, cache_write_tokens,
               output_tokens, reasoning_tokens, estimated_input_tokens,
               input_truncation_suspected, stable_prefix_hash, request_bytes,
               shared_prefix_bytes, cache_miss_cause, cache_miss_item, idle_seconds)
        SELECT $1, $4, $20, $21, $22, $23, $24, $12, $14, $19, $13, $15, $25, $26, $27, $28,
               $29, $30, $31, $32
        WHERE EXISTS (SELECT 1 FROM fence)
        ON CONFLICT (turn_id, model_call, submission) DO NOTHING
        RETURNING 1)"""
"""One submission's ``model_call_usage`` row (issue 14 point 5) with its assistant message, the
message's tokens being the counters' (``$12``–``$15``, ``$19``)."""

_RESULT = """
SELECT (SELECT bool_or(ours) FROM lease) AS ours, (SELECT bool_or(live) FROM lease) AS live,
       ARRAY(SELECT id FROM inserted UNION ALL SELECT id FROM existing) AS ids,
       ARRAY(SELECT sequence FROM inserted UNION ALL SELECT sequence FROM existing) AS sequences,
       ARRAY(SELECT id FROM inserted) AS new_ids,
       (SELECT MAX(sequence) FROM inserted) AS last_inserted"""


_FRESH_RESULT = """
SELECT (SELECT bool_or(ours) FROM lease) AS ours, (SELECT bool_or(live) FROM lease) AS live,
       (SELECT MAX(sequence) FROM inserted) AS last_inserted"""


def _sql(*, fenced: bool, counters: bool, call: bool, fresh: bool) -> str:
    return (
        f"WITH {_LEASE if fenced else _NO_LEASE},\n    {_FRESH_ROWS if fresh else _ROWS}"
        + (_COUNTERS if counters else "")
        + (_CALL if call else "")
        + (_FRESH_RESULT if fresh else _RESULT)
    )


_SQL = {
    (f, c, k, n): _sql(fenced=f, counters=c, call=k, fresh=n)
    for f in (True, False)
    for c in (True, False)
    for k in (True, False)
    for n in (True, False)
    if c or not k
}


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnCounters:
    """What a write adds to its turn row (storage.md §3): a completed response's tokens and
    tool calls; a submission's logical call index (``GREATEST``) and one more submission."""

    call: ModelCallRecord | None = None
    """The submission's usage record, stored with the assistant message (the write's first row;
    its tool results, when deferred, follow it in the same statement); its tokens are what the
    turn's counters add."""
    tool_calls: int = 0
    submission: int | None = None
    """The model call about to be submitted, or ``None``."""


@dataclass(frozen=True, slots=True)
class FencedWrite:
    """Each row's stored sequence by id (new and already stored), the ids written now, and the
    highest sequence the write inserted (``None`` when it inserted nothing)."""

    sequences: dict[MessageId, int]
    inserted: frozenset[MessageId]
    last_inserted: int | None


def _check(row: asyncpg.Record, lease: SessionLease) -> None:
    if not row["ours"]:
        raise LeaseLost(f"session {lease.session_id}: this daemon no longer owns it")
    if not row["live"]:
        raise LeaseLost(f"session {lease.session_id}: the lease expired before this write")


async def write_fenced(
    conn: Conn,
    *,
    session_id: SessionId,
    turn_id: TurnId,
    lease: SessionLease | None,
    after: int | None,
    rows: Sequence[NewMessage],
    counters: TurnCounters | None = None,
    fresh: bool = False,
) -> FencedWrite:
    """One statement: lease check, ``rows`` numbered after ``after`` and ``counters`` on the
    turn. ``LeaseLost`` (nothing written) when ``lease`` is stale; ``lease=None`` is unfenced.
    ``fresh``: every row's id is new (``_FRESH_ROWS``)."""
    call = counters.call if counters is not None else None
    usage = None if call is None else call.usage
    args: list[object] = [
        session_id,
        None if lease is None else lease.daemon_id,
        None if lease is None else lease.epoch,
        turn_id,
        after,
        [r.id for r in rows],
        [r.role.value for r in rows],
        [r.content for r in rows],
        [r.provider_call_id for r in rows],
        [r.tool_name for r in rows],
        [r.kind.value for r in rows],
    ]
    if counters is not None:
        args += [
            None if usage is None else usage.input_tokens,
            None if usage is None else usage.output_tokens,
            None if usage is None else usage.cached_input_tokens,
            None if usage is None else usage.reasoning_tokens,
            counters.tool_calls,
            counters.submission or 0,
            0 if counters.submission is None else 1,
            None if usage is None else usage.cache_write_tokens,
        ]
    if call is not None:
        message = rows[0]
        miss = call.cache_miss
        args += [
            call.model_call,
            call.submission,
            message.id,
            call.provider_id,
            call.model_name,
            call.estimated_input_tokens,
            call.input_truncation_suspected,
            call.stable_prefix_hash,
            call.request_bytes,
            call.shared_prefix_bytes,
            None if miss is None else miss.cause.value,
            None if miss is None else miss.item,
            call.idle_seconds,
        ]
    sql = _SQL[(lease is not None, counters is not None, call is not None, fresh)]
    row = await conn.fetchrow(sql, *args)
    assert row is not None
    if lease is not None:
        _check(row, lease)
    if fresh:
        last: int | None = row["last_inserted"]
        first = 0 if last is None else last - len(rows) + 1
        return FencedWrite(
            sequences={r.id: first + i for i, r in enumerate(rows)},
            inserted=frozenset(r.id for r in rows),
            last_inserted=last,
        )
    return FencedWrite(
        sequences=dict(zip(row["ids"], row["sequences"], strict=True)),
        inserted=frozenset(row["new_ids"]),
        last_inserted=row["last_inserted"],
    )


_FINISH = """,
    finished AS (
        UPDATE turns SET status = $5, error_code = $6, error_message = $7,
                         plan_unfinished_step_count = $8,
                         model_call_count = COALESCE($9, model_call_count),
                         model_submission_count = COALESCE($10, model_submission_count),
                         ended_at = GREATEST(now(), started_at), updated_at = now()
        WHERE id = $4 AND session_id = $1 AND status = 'running' AND EXISTS (SELECT 1 FROM fence)
        RETURNING 1)
SELECT (SELECT bool_or(ours) FROM lease) AS ours, (SELECT bool_or(live) FROM lease) AS live,
       EXISTS (SELECT 1 FROM finished) AS finished"""

_FINISH_SQL = {f: f"WITH {_LEASE if f else _NO_LEASE}{_FINISH}" for f in (True, False)}

LEASED_STATEMENTS = tuple(
    map(steady, (*(sql for key, sql in _SQL.items() if key[0]), _FINISH_SQL[True]))
)
"""Every form of the fenced write and the turn's end under a lease: a daemon's steady path."""


async def finish_fenced(
    conn: Conn,
    *,
    session_id: SessionId,
    turn_id: TurnId,
    lease: SessionLease | None,
    end: TurnClosing,
) -> None:
    """The turn's end in one statement, fenced like ``write_fenced``: ``LeaseLost`` when the
    lease is stale, ``RecordNotFound`` when the turn is not running (already ended, corrected)."""
    row = await conn.fetchrow(
        _FINISH_SQL[lease is not None],
        session_id,
        None if lease is None else lease.daemon_id,
        None if lease is None else lease.epoch,
        turn_id,
        end.status.value,
        end.error_code,
        end.error_message,
        end.plan_unfinished_step_count,
        end.model_call_count,
        end.model_submission_count,
    )
    assert row is not None
    if lease is not None:
        _check(row, lease)
    if not row["finished"]:
        raise RecordNotFound(f"no running turn to finish: {turn_id}")
