"""The ``trace_spans`` table: best-effort diagnostics, never business truth."""

from __future__ import annotations

from datetime import datetime

import orjson
from pydantic import JsonValue

from openwork_core.ids import MessageId, SessionId, SpanId, TurnId
from openwork_core.storage.postgres.connection import Conn


async def insert_span(
    conn: Conn,
    *,
    span_id: SpanId,
    trace_id: str,
    session_id: SessionId,
    turn_id: TurnId | None,
    parent_span_id: SpanId | None,
    kind: str,
    name: str,
    started_at: datetime,
    model_id: str | None = None,
    resolved_model_name: str | None = None,
    provider_call_id: str | None = None,
    requested_tool_name: str | None = None,
) -> None:
    await conn.execute(
        """INSERT INTO trace_spans (id, trace_id, session_id, turn_id, parent_span_id, kind, name,
                                    status, model_id, resolved_model_name, provider_call_id,
                                    requested_tool_name, started_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, 'running', $8, $9, $10, $11, $12)""",
        span_id,
        trace_id,
        session_id,
        turn_id,
        parent_span_id,
        kind,
        name,
        model_id,
        resolved_model_name,
        provider_call_id,
        requested_tool_name,
        started_at,
    )


async def finish_span(
    conn: Conn,
    *,
    span_id: SpanId,
    status: str,
    ended_at: datetime,
    error_code: str | None,
    error_message: str | None,
    attributes: dict[str, JsonValue],
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    resolved_tool_name: str | None = None,
    response_message_id: MessageId | None = None,
    permission_wait_ms: int | None = None,
) -> None:
    await conn.execute(
        """UPDATE trace_spans SET status = $2, ended_at = GREATEST($3, started_at),
               error_code = $4, error_message = $5, attributes = attributes || $6::jsonb,
               input_tokens = $7, output_tokens = $8, resolved_tool_name = $9,
               response_message_id = $10, permission_wait_ms = $11
           WHERE id = $1""",
        span_id,
        status,
        ended_at,
        error_code,
        error_message,
        orjson.dumps(attributes).decode(),
        input_tokens,
        output_tokens,
        resolved_tool_name,
        response_message_id,
        permission_wait_ms,
    )


async def mark_running_spans_unknown(conn: Conn, error_code: str) -> int:
    result: str = await conn.execute(
        """UPDATE trace_spans SET status = 'outcome_unknown', error_code = $1,
               ended_at = GREATEST(now(), started_at)
           WHERE status = 'running'""",
        error_code,
    )
    return int(result.split()[-1])
