"""``model_call_usage`` rows (migration 0008; issue 14 points 5 and 9): one per submission,
inserted by the assistant message's one-statement write (``fenced.py``); read back for the inspection and the session's
cache figures."""

from __future__ import annotations

import asyncpg

from openwork_core.ids import SessionId, TurnId
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.usage_records import (
    CacheMiss,
    CacheMissCause,
    ModelCallRecord,
    SessionUsageTotals,
    StoredModelCall,
)
from openwork_core.usage import TokenUsage

_COLUMNS = """turn_id, model_call, submission, message_id, provider_id, model_name,
    input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, reasoning_tokens,
    estimated_input_tokens, input_truncation_suspected, stable_prefix_hash, request_bytes,
    shared_prefix_bytes, cache_miss_cause, cache_miss_item, idle_seconds, created_at"""


def _stored(row: asyncpg.Record) -> StoredModelCall:
    cause = row["cache_miss_cause"]
    return StoredModelCall(
        turn_id=row["turn_id"],
        message_id=row["message_id"],
        created_at=row["created_at"],
        call=ModelCallRecord(
            model_call=row["model_call"],
            submission=row["submission"],
            provider_id=row["provider_id"],
            model_name=row["model_name"],
            usage=TokenUsage(
                input_tokens=row["input_tokens"],
                output_tokens=row["output_tokens"],
                cached_input_tokens=row["cached_input_tokens"],
                reasoning_tokens=row["reasoning_tokens"],
                cache_write_tokens=row["cache_write_tokens"],
            ),
            estimated_input_tokens=row["estimated_input_tokens"],
            input_truncation_suspected=row["input_truncation_suspected"],
            stable_prefix_hash=row["stable_prefix_hash"],
            request_bytes=row["request_bytes"],
            shared_prefix_bytes=row["shared_prefix_bytes"],
            cache_miss=None
            if cause is None
            else CacheMiss(cause=CacheMissCause(cause), item=row["cache_miss_item"]),
            idle_seconds=row["idle_seconds"],
        ),
    )


async def last_model_call(conn: Conn, session_id: SessionId) -> StoredModelCall | None:
    row = await conn.fetchrow(
        f"""SELECT {_COLUMNS} FROM model_call_usage WHERE session_id = $1
            ORDER BY created_at DESC, model_call DESC, submission DESC LIMIT 1""",
        session_id,
    )
    return None if row is None else _stored(row)


async def turn_model_calls(conn: Conn, turn_id: TurnId) -> list[StoredModelCall]:
    rows = await conn.fetch(
        f"""SELECT {_COLUMNS} FROM model_call_usage WHERE turn_id = $1
            ORDER BY model_call, submission""",
        turn_id,
    )
    return [_stored(r) for r in rows]


async def session_usage_totals(conn: Conn, session_id: SessionId) -> SessionUsageTotals:
    row = await conn.fetchrow(
        """SELECT count(*) AS calls,
                  COALESCE(sum(input_tokens), 0)::bigint AS input,
                  COALESCE(sum(cached_input_tokens) FILTER (WHERE input_tokens IS NOT NULL),
                           0)::bigint AS cached,
                  COALESCE(sum(cache_write_tokens), 0)::bigint AS written,
                  COALESCE(sum(output_tokens), 0)::bigint AS output,
                  COALESCE(sum(reasoning_tokens), 0)::bigint AS reasoning,
                  count(*) FILTER (WHERE input_truncation_suspected) AS truncated,
                  count(*) FILTER (WHERE cache_miss_cause IS NOT NULL) AS misses
           FROM model_call_usage WHERE session_id = $1""",
        session_id,
    )
    assert row is not None
    return SessionUsageTotals(
        model_calls=row["calls"],
        input_tokens=row["input"],
        cached_input_tokens=row["cached"],
        cache_write_tokens=row["written"],
        output_tokens=row["output"],
        reasoning_tokens=row["reasoning"],
        input_truncation_suspected_calls=row["truncated"],
        cache_misses=row["misses"],
    )
