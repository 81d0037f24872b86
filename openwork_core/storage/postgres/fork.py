"""Forking a session (issue 26 point 2): one repeatable-read transaction copies the source's
session row, its turns through the cut and their messages into a new root session. The source is
only read (it may be running: what it commits meanwhile is not in the snapshot).

Copies keep the source's message sequences and contents as they are, so the fork's Conversation
is the same items; ids are new (they are global keys): each turn gets a new id, a World State
message the id ``world-state:<new turn>:…`` (the id the fork itself would have written), every
other message a fresh one."""

from __future__ import annotations

import asyncpg

from openwork_core.ids import MessageId, SessionId, TurnId, new_message_id, new_turn_id
from openwork_core.session.errors import ForkCrossesCompaction
from openwork_core.session.fork import TurnSpan, fork_cut
from openwork_core.storage.postgres.sessions import fetch_session
from openwork_core.storage.records import SessionRecord

_SPANS = """SELECT t.id, t.status <> 'running' AS finished, m.last
    FROM turns t
    LEFT JOIN (SELECT turn_id, MAX(sequence) AS last FROM messages
               WHERE session_id = $1 GROUP BY turn_id) m ON m.turn_id = t.id
    WHERE t.session_id = $1 ORDER BY t.sequence"""

_COVERED = """SELECT 1 FROM conversation_compactions
    WHERE session_id = $1 AND through_message_sequence <= $2 LIMIT 1"""

_SESSION = """INSERT INTO sessions (id, title, working_directory, agent, provider_id, model_name,
        sandbox_mode, reasoning_effort, tool_result_pruned_through_sequence)
    SELECT $2, $3, working_directory, agent, provider_id, model_name, sandbox_mode,
           reasoning_effort, LEAST(tool_result_pruned_through_sequence, NULLIF($4::bigint, 0))
    FROM sessions WHERE id = $1"""

_TURNS = """INSERT INTO turns (id, session_id, client_request_id, sequence, model_id,
        resolved_provider_id, resolved_model_name, app_version, status, model_call_count,
        model_submission_count, tool_call_count, input_tokens, output_tokens,
        cached_input_tokens, reasoning_tokens, cache_write_tokens, error_code, error_message,
        started_at, ended_at, updated_at, plan_unfinished_step_count)
    SELECT m.new_id, $1, t.client_request_id, t.sequence, t.model_id, t.resolved_provider_id,
           t.resolved_model_name, t.app_version, t.status, t.model_call_count,
           t.model_submission_count, t.tool_call_count, t.input_tokens, t.output_tokens,
           t.cached_input_tokens, t.reasoning_tokens, t.cache_write_tokens, t.error_code,
           t.error_message, t.started_at, t.ended_at, t.updated_at, t.plan_unfinished_step_count
    FROM turns t JOIN unnest($2::text[], $3::text[]) AS m(old_id, new_id) ON m.old_id = t.id"""

_SOURCE_MESSAGES = """SELECT id, turn_id FROM messages WHERE session_id = $1 AND sequence <= $2
    ORDER BY sequence"""

_MESSAGES = """INSERT INTO messages (id, session_id, turn_id, sequence, role, content,
        content_format_version, provider_call_id, tool_name, message_kind, created_at)
    SELECT i.new_id, $1, i.new_turn, s.sequence, s.role, s.content, s.content_format_version,
           s.provider_call_id, s.tool_name, s.message_kind, s.created_at
    FROM messages s
    JOIN unnest($2::text[], $3::text[], $4::text[]) AS i(old_id, new_id, new_turn)
      ON i.old_id = s.id"""

WORLD_STATE_PREFIX = "world-state:"


def copied_message_id(old: str, old_turn: str | None, new_turn: str | None) -> MessageId:
    """A World State id names its turn: the copy names the fork's turn; others are fresh."""
    if old_turn and new_turn and old.startswith(f"{WORLD_STATE_PREFIX}{old_turn}:"):
        rest = old[len(WORLD_STATE_PREFIX) + len(old_turn) + 1 :]
        return MessageId(f"{WORLD_STATE_PREFIX}{new_turn}:{rest}")
    return new_message_id()


async def fork_session(
    pool: asyncpg.Pool,
    source: SessionId,
    fork: SessionId,
    title: str,
    after: int | None,
) -> SessionRecord:
    async with pool.acquire() as conn, conn.transaction(isolation="repeatable_read"):
        await fetch_session(conn, source)  # RecordNotFound for an unknown source
        spans = [
            TurnSpan(turn_id=TurnId(r["id"]), finished=r["finished"], last_sequence=r["last"])
            for r in await conn.fetch(_SPANS, source)
        ]
        cut = fork_cut(spans, after)
        if cut.through_sequence and await conn.fetchval(_COVERED, source, cut.through_sequence):
            raise ForkCrossesCompaction(cut.through_sequence)
        await conn.execute(_SESSION, source, fork, title, cut.through_sequence)
        turns = {old: new_turn_id() for old in cut.turns}
        await conn.execute(_TURNS, fork, list(turns), list(turns.values()))
        rows = await conn.fetch(_SOURCE_MESSAGES, source, cut.through_sequence)
        olds, news, new_turns = [], [], []
        for row in rows:
            old_turn = row["turn_id"]
            new_turn = turns.get(old_turn) if old_turn is not None else None
            olds.append(row["id"])
            news.append(copied_message_id(row["id"], old_turn, new_turn))
            new_turns.append(new_turn)
        await conn.execute(_MESSAGES, fork, olds, news, new_turns)
        return await fetch_session(conn, fork)
