"""Migration 0010 (issue 13 §7): the duplicate and unused indexes are gone, the rewritten CHECK
constraints accept and refuse exactly the rows they did, and model_call_usage's key to its turn
names the turn's session — on a fresh database and on one migrated before 0010 with rows in it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from openwork_core.storage.migrate import apply_migrations, discover_migrations
from tests.support.postgres import PgCluster

_BEFORE_0010 = tuple(m for m in discover_migrations() if m.version < 10)


async def _session_with_turn(conn: asyncpg.Connection, sid: str, tid: str) -> None:
    await conn.execute("INSERT INTO sessions (id, working_directory) VALUES ($1, '/w')", sid)
    await conn.execute(
        """INSERT INTO turns (id, session_id, client_request_id, sequence,
                              resolved_provider_id, resolved_model_name, app_version)
           VALUES ($1, $2, 'c', 1, 'p', 'm', '1')""",
        tid,
        sid,
    )
    await conn.execute(
        """INSERT INTO messages (id, session_id, turn_id, sequence, role, content)
           VALUES ($1, $2, $3, 1, 'assistant', '[]')""",
        f"msg-{tid}",
        sid,
        tid,
    )


async def _usage(conn: asyncpg.Connection, sid: str, tid: str, **columns: object) -> None:
    values = {
        "model_call": 1,
        "submission": 1,
        "input_tokens": None,
        "cache_miss_cause": None,
        "idle_seconds": None,
        **columns,
    }
    await conn.execute(
        """INSERT INTO model_call_usage (turn_id, model_call, submission, session_id, message_id,
               provider_id, model_name, input_tokens, estimated_input_tokens,
               stable_prefix_hash, request_bytes, cache_miss_cause, idle_seconds)
           VALUES ($1, $2, $3, $4, $5, 'p', 'm', $6, 10, 'h', 100, $7, $8)""",
        tid,
        values["model_call"],
        values["submission"],
        sid,
        f"msg-{tid}",
        values["input_tokens"],
        values["cache_miss_cause"],
        values["idle_seconds"],
    )


@pytest.fixture(params=["fresh", "migrated_with_rows"])
async def migrated(
    request: pytest.FixtureRequest, pg_cluster: PgCluster
) -> AsyncIterator[asyncpg.Connection]:
    """A database at the newest migration: applied at once, or up to 0009 with rows (NULL counters
    among them) and then 0010 over them."""
    url = await pg_cluster.new_database(migrated=False)
    conn = await asyncpg.connect(url)
    try:
        if request.param == "fresh":
            await apply_migrations(conn)
        else:
            await apply_migrations(conn, _BEFORE_0010)
            await _session_with_turn(conn, "ses-old", "turn-old")
            await _usage(conn, "ses-old", "turn-old", input_tokens=None, idle_seconds=None)
            assert await apply_migrations(conn) == [
                m.name for m in discover_migrations() if m.version >= 10
            ]
            assert await conn.fetchval("SELECT count(*) FROM model_call_usage") == 1
        yield conn
    finally:
        await conn.close()


async def test_the_duplicate_and_unused_indexes_are_gone(migrated: asyncpg.Connection) -> None:
    names = {r["indexname"] for r in await migrated.fetch("SELECT indexname FROM pg_indexes")}
    assert "idx_messages_session_sequence" not in names
    assert "idx_trace_spans_trace" not in names
    assert "messages_session_sequence" in names, "the unique constraint's index serves its scans"


async def test_the_rewritten_checks_accept_nulls_and_refuse_negatives(
    migrated: asyncpg.Connection,
) -> None:
    await _session_with_turn(migrated, "ses-a", "turn-a")
    await _usage(migrated, "ses-a", "turn-a", input_tokens=None, cache_miss_cause=None)
    await _usage(migrated, "ses-a", "turn-a", model_call=2, input_tokens=0, idle_seconds=0.0)
    with pytest.raises(asyncpg.CheckViolationError) as refused:
        await _usage(migrated, "ses-a", "turn-a", model_call=3, input_tokens=-1)
    assert refused.value.constraint_name == "model_call_usage_input_tokens_check"
    with pytest.raises(asyncpg.CheckViolationError):
        await _usage(migrated, "ses-a", "turn-a", model_call=3, cache_miss_cause="nope")
    with pytest.raises(asyncpg.CheckViolationError):
        await _usage(migrated, "ses-a", "turn-a", model_call=3, idle_seconds=-0.5)
    await migrated.execute("UPDATE turns SET input_tokens = NULL, ended_at = NULL")
    with pytest.raises(asyncpg.CheckViolationError) as refused:
        await migrated.execute("UPDATE turns SET output_tokens = -1")
    assert refused.value.constraint_name == "turns_output_tokens_check"
    with pytest.raises(asyncpg.CheckViolationError):
        await migrated.execute(
            """UPDATE turns SET status = 'completed', ended_at = started_at - interval '1 s'"""
        )


async def test_a_usage_row_names_a_turn_of_its_own_session_and_goes_with_the_session(
    migrated: asyncpg.Connection,
) -> None:
    await _session_with_turn(migrated, "ses-a", "turn-a")
    await _session_with_turn(migrated, "ses-b", "turn-b")
    with pytest.raises(asyncpg.ForeignKeyViolationError):
        await _usage(migrated, "ses-b", "turn-a")
    await _usage(migrated, "ses-a", "turn-a")
    await migrated.execute("DELETE FROM sessions WHERE id = 'ses-a'")
    assert (
        await migrated.fetchval("SELECT count(*) FROM model_call_usage WHERE session_id = 'ses-a'")
        == 0
    )
