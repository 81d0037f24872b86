"""A session's history as the desktop app reads it (issue 16): Turns newest first, one Turn's
timing and usage, rewind targets, the latest plan, sub-agents, a Turn's trace spans."""

from __future__ import annotations

import asyncpg

from openwork_chat_state.ids import CompactionId
from openwork_core.ids import SessionId, TurnId
from openwork_core.storage.desktop_records import (
    ChildRow,
    CompactionRow,
    PlanRow,
    SpanRow,
    TurnHistoryRow,
)
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.records import TurnStatus
from openwork_core.storage.trace_records import SpanKind, SpanStatus
from openwork_core.usage import TokenUsage

_TURN = """SELECT t.id, t.sequence, t.status, t.error_code, t.started_at, t.ended_at,
        t.model_call_count, t.input_tokens, t.cached_input_tokens, t.output_tokens,
        t.reasoning_tokens, t.cache_write_tokens,
        (SELECT m.content::text FROM messages m WHERE m.turn_id = t.id AND m.role = 'assistant'
         ORDER BY m.sequence DESC LIMIT 1) AS last_assistant_content
    FROM turns t"""


def _turn(row: asyncpg.Record) -> TurnHistoryRow:
    return TurnHistoryRow(
        turn_id=row["id"],
        sequence=row["sequence"],
        status=TurnStatus(row["status"]),
        error_code=row["error_code"],
        started_at=row["started_at"],
        finished_at=row["ended_at"],
        model_calls=row["model_call_count"],
        usage=TokenUsage(
            input_tokens=row["input_tokens"] or 0,
            cached_input_tokens=row["cached_input_tokens"] or 0,
            cache_write_tokens=row["cache_write_tokens"] or 0,
            output_tokens=row["output_tokens"] or 0,
            reasoning_tokens=row["reasoning_tokens"] or 0,
        ),
        last_assistant_content=row["last_assistant_content"],
    )


async def fetch_turn_page(
    conn: Conn, session_id: SessionId, before_sequence: int | None, limit: int
) -> list[TurnHistoryRow]:
    rows = await conn.fetch(
        f"""{_TURN} WHERE t.session_id = $1 AND ($2::bigint IS NULL OR t.sequence < $2)
            ORDER BY t.sequence DESC LIMIT $3""",
        session_id,
        before_sequence,
        limit,
    )
    return [_turn(r) for r in rows]


async def fetch_turn_history(
    conn: Conn, session_id: SessionId, turn_id: TurnId
) -> TurnHistoryRow | None:
    row = await conn.fetchrow(f"{_TURN} WHERE t.session_id = $1 AND t.id = $2", session_id, turn_id)
    return None if row is None else _turn(row)


async def fetch_compactions(conn: Conn, session_id: SessionId) -> list[CompactionRow]:
    """Every checkpoint, newest first. Tokens before/after: the recorded columns, else the
    diagnostic compaction span's figures, else NULL (a span is best effort)."""
    rows = await conn.fetch(
        """SELECT c.id, c.sequence, c.kind, c.created_at, c.through_message_sequence,
                  c.parent_compaction_id, c.trigger_turn_id,
                  COALESCE(c.conversation_tokens_before,
                           (SELECT (sp.attributes->>'conversationTokensBefore')::bigint
                            FROM trace_spans sp
                            WHERE sp.session_id = c.session_id AND sp.kind = 'compaction'
                              AND sp.attributes->>'checkpointId' = c.id LIMIT 1)) AS before,
                  COALESCE(c.conversation_tokens_after,
                           (SELECT (sp.attributes->>'conversationTokensAfter')::bigint
                            FROM trace_spans sp
                            WHERE sp.session_id = c.session_id AND sp.kind = 'compaction'
                              AND sp.attributes->>'checkpointId' = c.id LIMIT 1)) AS after
           FROM conversation_compactions c WHERE c.session_id = $1
           ORDER BY c.sequence DESC""",
        session_id,
    )
    return [
        CompactionRow(
            compaction_id=r["id"],
            sequence=r["sequence"],
            kind=r["kind"],
            created_at=r["created_at"],
            through_message_sequence=r["through_message_sequence"],
            parent_compaction_id=r["parent_compaction_id"],
            trigger_turn_id=r["trigger_turn_id"],
            tokens_before=r["before"],
            tokens_after=r["after"],
        )
        for r in rows
    ]


async def record_compaction_tokens(
    conn: Conn, session_id: SessionId, compaction_id: CompactionId, before: int, after: int
) -> None:
    result = await conn.execute(
        """UPDATE conversation_compactions
           SET conversation_tokens_before = $3, conversation_tokens_after = $4
           WHERE session_id = $1 AND id = $2""",
        session_id,
        compaction_id,
        before,
        after,
    )
    if result != "UPDATE 1":
        raise RecordNotFound(f"unknown compaction checkpoint: {compaction_id}")


async def fetch_latest_plan(conn: Conn, session_id: SessionId) -> PlanRow | None:
    """The plan of the latest Turn that called ``update_plan`` (update-plan.md §5)."""
    row = await conn.fetchrow(
        """SELECT p.turn_id, p.explanation, p.steps::text AS steps, p.updated_at
           FROM turn_plans p JOIN turns t ON t.id = p.turn_id
           WHERE t.session_id = $1 ORDER BY t.sequence DESC LIMIT 1""",
        session_id,
    )
    if row is None:
        return None
    return PlanRow(
        turn_id=row["turn_id"],
        explanation=row["explanation"],
        steps_json=row["steps"],
        updated_at=row["updated_at"],
    )


async def fetch_children(conn: Conn, session_id: SessionId) -> list[ChildRow]:
    rows = await conn.fetch(
        """SELECT s.id, s.task_name, s.agent_role, s.created_at,
                  (SELECT count(*) FROM turns t WHERE t.session_id = s.id) AS turn_count,
                  (SELECT t.id FROM turns t WHERE t.session_id = s.id AND t.status = 'running'
                   LIMIT 1) AS running_turn_id,
                  (SELECT t.status FROM turns t WHERE t.session_id = s.id
                   ORDER BY t.sequence DESC LIMIT 1) AS last_turn_status,
                  GREATEST(s.created_at, s.last_turn_at,
                           (SELECT max(t.ended_at) FROM turns t WHERE t.session_id = s.id))
                      AS last_activity_at
           FROM sessions s WHERE s.parent_session_id = $1
           ORDER BY s.created_at, s.task_name""",
        session_id,
    )
    return [
        ChildRow(
            session_id=r["id"],
            task_name=r["task_name"],
            agent_role=r["agent_role"],
            created_at=r["created_at"],
            turn_count=r["turn_count"],
            running_turn_id=r["running_turn_id"],
            last_turn_status=None
            if r["last_turn_status"] is None
            else TurnStatus(r["last_turn_status"]),
            last_activity_at=r["last_activity_at"],
        )
        for r in rows
    ]


async def fetch_turn_spans(conn: Conn, session_id: SessionId, turn_id: TurnId) -> list[SpanRow]:
    rows = await conn.fetch(
        """SELECT id, parent_span_id, kind, name, status, started_at, ended_at,
                  resolved_model_name, provider_call_id,
                  COALESCE(resolved_tool_name, requested_tool_name) AS tool_name,
                  input_tokens, output_tokens, error_code, attributes::text AS attributes
           FROM trace_spans WHERE session_id = $1 AND turn_id = $2
           ORDER BY started_at, id""",
        session_id,
        turn_id,
    )
    return [
        SpanRow(
            span_id=r["id"],
            parent_span_id=r["parent_span_id"],
            kind=SpanKind(r["kind"]),
            name=r["name"],
            status=SpanStatus(r["status"]),
            started_at=r["started_at"],
            ended_at=r["ended_at"],
            resolved_model_name=r["resolved_model_name"],
            provider_call_id=r["provider_call_id"],
            tool_name=r["tool_name"],
            input_tokens=r["input_tokens"],
            output_tokens=r["output_tokens"],
            error_code=r["error_code"],
            attributes_json=r["attributes"],
        )
        for r in rows
    ]


async def require_session(conn: Conn, session_id: SessionId) -> None:
    if await conn.fetchval("SELECT 1 FROM sessions WHERE id = $1", session_id) is None:
        raise RecordNotFound(f"unknown session: {session_id}")


async def require_turn(conn: Conn, session_id: SessionId, turn_id: TurnId) -> None:
    found = await conn.fetchval(
        "SELECT 1 FROM turns WHERE id = $1 AND session_id = $2", turn_id, session_id
    )
    if found is None:
        raise RecordNotFound(f"unknown turn: {turn_id}")
