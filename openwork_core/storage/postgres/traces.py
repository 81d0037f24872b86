"""The ``trace_spans`` table: best-effort diagnostics, never business truth."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import asyncpg
import orjson

from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.postgres.steady_statements import steady
from openwork_core.storage.trace_records import SpanClosed, SpanOpened

SPAN_BATCH = steady("""
WITH opened AS (
    INSERT INTO trace_spans (id, trace_id, session_id, turn_id, parent_span_id, kind, name,
                             model_id, resolved_model_name, provider_call_id,
                             requested_tool_name, started_at, status, ended_at, error_code,
                             error_message, attributes, input_tokens, output_tokens,
                             resolved_tool_name, response_message_id, permission_wait_ms)
    SELECT id, trace_id, session_id, turn_id, parent_span_id, kind, name, model_id,
           resolved_model_name, provider_call_id, requested_tool_name, started_at,
           COALESCE(status, 'running'),
           CASE WHEN ended_at IS NULL THEN NULL ELSE GREATEST(ended_at, started_at) END, error_code,
           error_message, COALESCE(attributes::jsonb, '{}'::jsonb), input_tokens,
           output_tokens, resolved_tool_name, response_message_id, permission_wait_ms
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                $7::text[], $8::text[], $9::text[], $10::text[], $11::text[],
                $12::timestamptz[], $13::text[], $14::timestamptz[], $15::text[], $16::text[],
                $17::text[], $18::bigint[], $19::bigint[], $20::text[], $21::text[],
                $22::bigint[])
         AS t(id, trace_id, session_id, turn_id, parent_span_id, kind, name, model_id,
              resolved_model_name, provider_call_id, requested_tool_name, started_at, status,
              ended_at, error_code, error_message, attributes, input_tokens, output_tokens,
              resolved_tool_name, response_message_id, permission_wait_ms)
    RETURNING 1)
UPDATE trace_spans s SET status = c.status, ended_at = GREATEST(c.ended_at, s.started_at),
       error_code = c.error_code, error_message = c.error_message,
       attributes = s.attributes || c.attributes::jsonb, input_tokens = c.input_tokens,
       output_tokens = c.output_tokens, resolved_tool_name = c.resolved_tool_name,
       response_message_id = c.response_message_id, permission_wait_ms = c.permission_wait_ms
FROM unnest($23::text[], $24::text[], $25::timestamptz[], $26::text[], $27::text[],
            $28::text[], $29::bigint[], $30::bigint[], $31::text[], $32::text[], $33::bigint[])
     AS c(id, status, ended_at, error_code, error_message, attributes, input_tokens,
          output_tokens, resolved_tool_name, response_message_id, permission_wait_ms)
WHERE s.id = c.id""")


def _closing_columns(closes: Sequence[SpanClosed | None]) -> list[list[object]]:
    def col(pick: Callable[[SpanClosed], object]) -> list[object]:
        return [None if c is None else pick(c) for c in closes]

    return [
        col(lambda c: c.status),
        col(lambda c: c.ended_at),
        col(lambda c: c.error_code),
        col(lambda c: c.error_message),
        col(lambda c: orjson.dumps(c.attributes).decode()),
        col(lambda c: c.input_tokens),
        col(lambda c: c.output_tokens),
        col(lambda c: c.resolved_tool_name),
        col(lambda c: c.response_message_id),
        col(lambda c: c.permission_wait_ms),
    ]


async def write_span_batch(
    conn: Conn,
    opened: Sequence[tuple[SpanOpened, SpanClosed | None]],
    closed: Sequence[SpanClosed],
) -> None:
    """One statement: the spans opened since the last batch (each with its closing when that
    came in the same batch: one insert of the finished row) and the closings of spans written
    by earlier batches."""
    opens = [o for o, _ in opened]
    await conn.execute(
        SPAN_BATCH,
        [o.span_id for o in opens],
        [o.trace_id for o in opens],
        [o.session_id for o in opens],
        [o.turn_id for o in opens],
        [o.parent_span_id for o in opens],
        [o.kind for o in opens],
        [o.name for o in opens],
        [o.model_id for o in opens],
        [o.resolved_model_name for o in opens],
        [o.provider_call_id for o in opens],
        [o.requested_tool_name for o in opens],
        [o.started_at for o in opens],
        *_closing_columns([c for _, c in opened]),
        [c.span_id for c in closed],
        *_closing_columns(closed),
    )


class PostgresSpanSink:
    """The trace writer's ``SpanSink``: each batch one statement on a pool connection."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def write_span_batch(
        self,
        opened: Sequence[tuple[SpanOpened, SpanClosed | None]],
        closed: Sequence[SpanClosed],
    ) -> None:
        async with self._pool.acquire() as conn:
            await write_span_batch(conn, opened, closed)
