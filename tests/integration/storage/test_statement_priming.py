"""A warmed pool's connections have every statement of the steady path prepared before the
first turn (issue 13 §3: the first model call after start no slower than the second). What a
connection has prepared is read from PostgreSQL itself (``pg_prepared_statements``, one
connection at a time): a statement a turn still had to prepare shows up there as new, and is
one to declare ``steady`` where it is written."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.storage.postgres.connection import PoolWarmth, create_pool, prime
from openwork_core.storage.postgres.steady_statements import steady_statements
from openwork_core.storage.postgres.store import PostgresStore
from openwork_tools.modes import SandboxMode
from tests.support.runtime import runtime

PREPARED = "SELECT statement FROM pg_prepared_statements"


async def prepared_per_connection(pool: asyncpg.Pool) -> dict[int, frozenset[str]]:
    """Backend pid → the statements that connection has prepared, for every connection of the
    pool (all idle: each borrowed at once, so every one is a different connection)."""
    seen: dict[int, frozenset[str]] = {}
    held = [await pool.acquire() for _ in range(pool.get_size())]
    try:
        for conn in held:
            rows = await conn.fetch(PREPARED)
            seen[conn.get_server_pid()] = frozenset(r["statement"] for r in rows)
    finally:
        for conn in held:
            await pool.release(conn)
    return seen


async def primed_fresh(database_url: str) -> frozenset[str]:
    """What priming prepares on a connection of its own (the catalog lookups for parameter
    types included), and the probe of this test."""
    conn = await asyncpg.connect(database_url)
    try:
        await prime(conn, steady_statements())
        await conn.fetch(PREPARED)
        return frozenset(r["statement"] for r in await conn.fetch(PREPARED))
    finally:
        await conn.close()


@pytest.fixture
async def warmth() -> PoolWarmth:
    return PoolWarmth()


@pytest.fixture
async def warmed_store(database_url: str, warmth: PoolWarmth) -> AsyncIterator[PostgresStore]:
    pool = await create_pool(database_url, max_size=5, warmth=warmth)
    try:
        yield PostgresStore(pool)
    finally:
        await pool.close()


def _script() -> list[ScriptedResponse]:
    """A turn of the steady path's shapes: an effect-free step (read: deferred, one fenced
    statement), an effectful one (write: written ahead), then the final answer."""
    return [
        ScriptedResponse(tool_calls=(("r1", "read", {"path": "notes.txt"}),)),
        ScriptedResponse(tool_calls=(("w1", "write", {"path": "out.txt", "content": "x"}),)),
        ScriptedResponse(text="done"),
    ]


async def test_a_first_turn_on_a_warmed_pool_prepares_no_statement(
    warmed_store: PostgresStore, warmth: PoolWarmth, database_url: str, tmp_path: Path
) -> None:
    model = ScriptedModel([*_script(), *_script()])
    async with runtime(warmed_store, tmp_path, model=model) as rt:
        (rt.workspace / "notes.txt").write_text("some notes\n")
        await rt.core.warm_up()  # as the daemon: the session runtime imported, then the pool
        assert await warmth.warm(warmed_store.pool) >= 1
        before = await prepared_per_connection(warmed_store.pool)
        baseline = await primed_fresh(database_url)
        for _ in range(2):
            session_id = await rt.new_session(SandboxMode.AUTO)
            await rt.run_turn(session_id, "go")
            await rt.core.trace.flushed()
        after = await prepared_per_connection(warmed_store.pool)
    unprepared = {
        statement
        for pid, statements in after.items()
        for statement in statements - before.get(pid, baseline)
    }
    assert not unprepared, "\n\n".join(sorted(unprepared))


async def test_a_connection_opened_after_the_warm_up_is_primed_at_connect(
    warmed_store: PostgresStore, warmth: PoolWarmth, database_url: str
) -> None:
    await warmth.warm(warmed_store.pool)
    pool = warmed_store.pool
    held = [await pool.acquire() for _ in range(pool.get_size() + 1)]  # one more: a new one
    try:
        newest = held[-1]
        rows = await newest.fetch(PREPARED)
    finally:
        for conn in held:
            await pool.release(conn)
    assert set(steady_statements()) <= {r["statement"] for r in rows}


async def test_a_primed_connection_serves_the_next_borrowers_isolated_transaction(
    database_url: str,
) -> None:
    """asyncpg prepares without a ``Sync``: a connection left so would fail its next borrower's
    ``BEGIN ISOLATION LEVEL REPEATABLE READ`` (the conversation load's) with "must be called
    before any query". Both ways of priming — the warm-up's and at connect — leave it closed."""
    warmth = PoolWarmth()
    pool = await create_pool(database_url, min_size=1, max_size=2, warmth=warmth)
    try:
        assert await warmth.warm(pool) == 1
        held = [await pool.acquire() for _ in range(2)]  # the second is opened, primed at connect
        try:
            for conn in held:
                async with conn.transaction(isolation="repeatable_read", readonly=True):
                    assert await conn.fetchval("SELECT count(*) FROM messages") == 0
        finally:
            for conn in held:
                await pool.release(conn)
    finally:
        await pool.close()
