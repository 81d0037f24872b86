"""No reset round trip for a provably clean pool connection, the reset for a dirty one (issue 13,
point 2): what asyncpg's reset query clears — session settings, session advisory locks,
``LISTEN`` registrations — never leaks to the next borrower."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import cast

import asyncpg
import pytest
from asyncpg.pool import PoolConnectionProxy

from openwork_core.storage.postgres.connection import (
    TrackedConnection,
    create_pool,
    leaves_session_state,
)


@pytest.fixture
async def pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    one = await create_pool(database_url, min_size=1, max_size=1)  # always the same connection
    try:
        yield one
    finally:
        await one.close()


async def resets(pool: asyncpg.Pool) -> int:
    """How many times the pool's one connection was reset (borrowing it to ask resets nothing:
    it went back clean)."""
    async with pool.acquire() as conn:
        assert issubclass(type(conn), PoolConnectionProxy)
        return cast(TrackedConnection, conn).resets


async def test_a_connection_that_ran_only_plain_statements_goes_back_without_the_reset(
    pool: asyncpg.Pool,
) -> None:
    for _ in range(3):
        async with pool.acquire() as conn:
            await conn.fetchval("SELECT 1")
            await conn.execute("UPDATE turns SET status = status WHERE false")
            async with conn.transaction():
                await conn.fetchval("SELECT count(*) FROM messages")
    assert await resets(pool) == 0


async def test_a_connection_whose_statement_failed_gets_the_reset_query(
    pool: asyncpg.Pool,
) -> None:
    """A failed statement leaves the protocol's state unknown (an outage's terminated backend
    leaves it consuming the FATAL error: "another operation is in progress" for the next
    borrower): the reset query proves the connection, or fails and the pool closes it, before
    anyone borrows it again."""
    async with pool.acquire() as conn:
        with pytest.raises(asyncpg.DivisionByZeroError):
            await conn.fetchval("SELECT 1 / 0")
        with pytest.raises(asyncpg.PostgresSyntaxError):
            await conn.execute("SELEC 1")
    assert await resets(pool) == 1
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT 2") == 2
    assert await resets(pool) == 1


async def test_a_connection_that_handed_out_a_prepared_statement_gets_the_reset_query(
    pool: asyncpg.Pool,
) -> None:
    """A prepared statement (or a cursor) runs its statements outside the connection's methods,
    where a failure cannot be seen: the connection is proved by the reset query."""
    async with pool.acquire() as conn:
        statement = await conn.prepare("SELECT 1 / $1::int")
        with pytest.raises(asyncpg.DivisionByZeroError):
            await statement.fetchval(0)
    assert await resets(pool) == 1
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT 2") == 2
    assert await resets(pool) == 1


async def test_a_session_setting_is_reset_before_the_next_borrower(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        default = await conn.fetchval("SHOW application_name")
        await conn.execute("SET application_name = 'dirty'")
    async with pool.acquire() as conn:
        assert await conn.fetchval("SHOW application_name") == default
        await conn.fetchval("SELECT set_config('statement_timeout', '1234', false)")
    async with pool.acquire() as conn:
        assert await conn.fetchval("SHOW statement_timeout") != "1234ms"
    assert await resets(pool) == 2


async def test_a_session_advisory_lock_is_released_before_the_next_borrower(
    pool: asyncpg.Pool, database_url: str
) -> None:
    async with pool.acquire() as conn:
        await conn.fetchval("SELECT pg_advisory_lock(4242)")
    other = await asyncpg.connect(database_url)
    try:
        assert await other.fetchval("SELECT pg_try_advisory_lock(4242)") is True
    finally:
        await other.close()
    assert await resets(pool) == 1


@pytest.mark.filterwarnings("ignore:.*active notification listener:asyncpg.InterfaceWarning")
async def test_a_listener_is_unlistened_before_the_next_borrower(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn:
        await conn.add_listener("bench_channel", lambda *_: None)
    async with pool.acquire() as conn:
        channels = await conn.fetch("SELECT pg_listening_channels()")
    assert channels == []
    assert await resets(pool) == 1


def test_every_statement_form_that_leaves_session_state_is_recognised() -> None:
    dirty = [
        "SET search_path = x",
        "  reset all",
        "SELECT 1; SET TIME ZONE 'UTC'",
        "LISTEN c",
        "DECLARE c CURSOR WITH HOLD FOR SELECT 1",
        "PREPARE p AS SELECT 1",
        "DISCARD ALL",
        "LOAD 'x'",
        "CREATE TEMP TABLE t (a int)",
        "create temporary table t (a int)",
        "SELECT set_config('a.b', 'c', false)",
        "SELECT pg_advisory_lock(1)",
        "SELECT pg_try_advisory_lock_shared(1)",
    ]
    clean = [
        "UPDATE turns SET status = $2 WHERE id = $1",
        "SELECT pg_advisory_xact_lock(1)",
        "BEGIN;",
        "COMMIT;",
        "WITH lease AS (SELECT 1 FROM session_leases FOR SHARE) SELECT 1",
        "INSERT INTO messages (id) VALUES ('reset')",
    ]
    assert [q for q in dirty if not leaves_session_state(q)] == []
    assert [q for q in clean if leaves_session_state(q)] == []
