"""Pool creation: JSON columns travel as text, decoded where they are used; and no reset round
trip when a connection goes back to the pool provably clean (issue 13, point 2).

asyncpg resets every released connection with one query (``pg_advisory_unlock_all(); CLOSE ALL;
UNLISTEN *; RESET ALL``) — a round trip per acquire. ``TrackedConnection`` notes every statement
that could leave session state behind (``SET``/``RESET``/``set_config``, session advisory
locks, ``LISTEN``, cursors held past a transaction, ``PREPARE``, temporary tables, ``DISCARD``,
``LOAD``), every listener added, every statement that failed (its protocol state is then
unknown) and every prepared statement or cursor handed out (they run outside the connection's
methods); only such a connection gets the reset query when released. It sees statements where
they enter: asyncpg's public statement methods, which it overrides (``connection_class`` is
asyncpg's documented way to extend a connection), never asyncpg's internals.
An open transaction is rolled back by asyncpg itself before the reset callback runs, whatever
the callback decides. Statements asyncpg prepares for its own cache need no reset (the reset
query never touched them)."""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeAlias, TypeVar, cast

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from openwork_core.storage.postgres.steady_statements import steady_statements

_SESSION_STATE = re.compile(
    r"(?:^|;)\s*(?:SET|RESET|LISTEN|DECLARE|PREPARE|DISCARD|LOAD|CREATE\s+(?:GLOBAL\s+|LOCAL\s+)?TEMP)"
    r"|set_config\s*\(|pg_(?:try_)?advisory_lock|\bWITH\s+HOLD\b",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=4096)
def leaves_session_state(query: str) -> bool:
    """Whether ``query`` may change what the reset query clears (conservative: a false alarm
    only costs the reset; a miss would leak state, so every such statement form is listed)."""
    return _SESSION_STATE.search(query) is not None


StatementMethod = TypeVar("StatementMethod", bound=Callable[..., Awaitable[Any]])


def tracked(method: StatementMethod) -> StatementMethod:
    """``method`` (a statement method of ``asyncpg.Connection``, its first argument the query
    or table) marking the connection dirty for a statement that leaves session state and for
    any failure: e.g. a backend terminated mid-statement leaves the protocol consuming an error
    ("another operation is in progress" for the next borrower); the reset query on release
    fails on such a connection and the pool closes it."""

    @functools.wraps(method)
    async def run(connection: TrackedConnection, query: str, *args: Any, **kwargs: Any) -> Any:
        if leaves_session_state(query):
            connection.dirty = True
        try:
            return await method(connection, query, *args, **kwargs)
        except BaseException:
            connection.dirty = True  # its state is unknown: the reset query proves it (or drops it)
            raise

    return cast(StatementMethod, run)


class TrackedConnection(asyncpg.Connection):
    """An asyncpg connection that knows whether it may carry session state."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.dirty = False
        """Set by a statement or listener that may leave session state; cleared by the reset."""
        self.resets = 0
        """How many times the reset query ran on this connection (tests and benchmarks)."""
        self.primed = 0
        """How many of its pool's steady statements it has prepared (``PoolWarmth``)."""

    def note_primed(self, count: int) -> None:
        """A method, so that a pool's proxy (which passes calls, not assignments) can set it."""
        self.primed = count

    execute = tracked(asyncpg.Connection.execute)
    executemany = tracked(asyncpg.Connection.executemany)
    fetch = tracked(asyncpg.Connection.fetch)
    fetchval = tracked(asyncpg.Connection.fetchval)
    fetchrow = tracked(asyncpg.Connection.fetchrow)
    fetchmany = tracked(asyncpg.Connection.fetchmany)
    copy_from_query = tracked(asyncpg.Connection.copy_from_query)
    copy_from_table = tracked(asyncpg.Connection.copy_from_table)
    copy_to_table = tracked(asyncpg.Connection.copy_to_table)
    copy_records_to_table = tracked(asyncpg.Connection.copy_records_to_table)

    async def prepare(self, query: str, *args: Any, **kwargs: Any) -> Any:
        self.dirty = True  # the statement runs (and may fail) outside this connection's methods
        return await super().prepare(query, *args, **kwargs)

    def cursor(self, query: str, *args: Any, **kwargs: Any) -> Any:
        self.dirty = True  # likewise: the cursor runs its statements itself
        return super().cursor(query, *args, **kwargs)

    async def add_listener(self, channel: str, callback: Any) -> None:
        self.dirty = True
        await super().add_listener(channel, callback)

    def add_log_listener(self, callback: Any) -> None:
        self.dirty = True
        super().add_log_listener(callback)


async def reset_if_dirty(connection: asyncpg.Connection) -> None:
    """The pool's ``reset`` callback (asyncpg has already rolled back an open transaction and
    dropped local listener callbacks): the reset query only for a connection that may carry
    session state."""
    if isinstance(connection, TrackedConnection) and not connection.dirty:
        return
    query = connection.get_reset_query()
    if query:
        await connection.execute(query)
    if isinstance(connection, TrackedConnection):
        connection.dirty = False
        connection.resets += 1


async def _init_connection(connection: asyncpg.Connection) -> None:
    for type_name in ("json", "jsonb"):
        await connection.set_type_codec(
            type_name, schema="pg_catalog", encoder=str, decoder=str, format="text"
        )


async def prime(connection: Conn, statements: Iterable[str]) -> None:
    """Put ``statements`` into the connection's statement cache without running them: asyncpg
    prepares a statement (parse, describe, and a catalog lookup for each parameter type it has no
    codec for, such as ``bigint[]``) the first time a connection runs it, which is what a first
    turn on a fresh connection would otherwise pay. ``executemany`` with no argument sets
    prepares and caches it, then executes it zero times.

    asyncpg prepares without a ``Sync``, expecting the statement's execution to send it: left so,
    the server's implicit transaction stays open, and the next borrower's ``BEGIN ISOLATION
    LEVEL …`` fails ("must be called before any query"). A simple query closes it."""
    for statement in statements:
        await connection.executemany(statement, [])
    await connection.execute(_CLOSE_IMPLICIT_TRANSACTION)
    if issubclass(type(connection), TrackedConnection):  # not a pool's proxy (asyncpg's
        # isinstance answers True for any connection or proxy): asyncpg's type lookup turns jit
        # off for its one query and back to what it was after it, so the connection leaves with
        # the session state it came with (a borrowed one is reset once when it goes back)
        cast(TrackedConnection, connection).dirty = False


_CLOSE_IMPLICIT_TRANSACTION = "SELECT 1"
"""Sent as a simple query (no arguments): its end is a ``Sync``."""


class PoolWarmth:
    """The statements every connection of one pool prepares before it serves a turn (issue 13
    §3: the first model call after start no slower than the second): those declared ``steady``
    (``steady_statements``) when ``warm`` starts, by which time the session runtime's storage
    modules are imported. ``warm`` primes the connections the pool opened while the daemon
    started, once it listens (the start does not wait for them); from then on every new
    connection is primed at connect."""

    def __init__(self) -> None:
        self.statements: tuple[str, ...] = ()
        """What ``warm`` primed, once it is done: what a connection opened later primes."""

    async def init(self, connection: asyncpg.Connection) -> None:
        """The pool's ``init``: the codecs, and the statements once ``warm`` is done."""
        await _init_connection(connection)
        if self.statements:
            await prime(connection, self.statements)
            cast(TrackedConnection, connection).primed = len(self.statements)

    async def warm(self, pool: asyncpg.Pool) -> int:
        """Prime every connection the pool holds, one statement per borrow, so that a request
        which comes meanwhile waits for at most one statement's preparation, never for the whole
        warm-up. A connection that has them all is kept aside while other connections are idle
        (so the next borrow reaches one of them) and given back as soon as none is: done when
        the pool has no idle connection left to prime. The number of connections primed."""
        statements = steady_statements()
        total = len(statements)
        primed = 0
        aside: list[PoolConnectionProxy[asyncpg.Record]] = []
        try:
            while True:
                borrowed = await pool.acquire()
                connection = cast(TrackedConnection, borrowed)  # a proxy: reads and calls pass
                done = connection.primed
                if done >= total:
                    aside.append(borrowed)
                    if pool.get_idle_size() == 0:
                        break
                    continue
                try:
                    await prime(borrowed, statements[done : done + 1])
                    connection.note_primed(done + 1)
                finally:
                    await pool.release(borrowed)
                primed += done + 1 == total
        finally:
            for borrowed in aside:
                await pool.release(borrowed)
        self.statements = statements
        return primed


async def create_pool(
    dsn: str, *, min_size: int = 1, max_size: int = 10, warmth: PoolWarmth | None = None
) -> asyncpg.Pool:
    pool = await asyncpg.create_pool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        init=_init_connection if warmth is None else warmth.init,
        command_timeout=60,
        connection_class=TrackedConnection,
        reset=reset_if_dirty,
    )
    assert pool is not None
    return pool


Conn: TypeAlias = "asyncpg.Connection[asyncpg.Record] | PoolConnectionProxy[asyncpg.Record]"
"""A plain connection or one borrowed from the pool: both run the same statements."""
