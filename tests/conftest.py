"""Shared fixtures: PostgreSQL from the ladder in tests/support/postgres.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Generator
from pathlib import Path

import pytest
from hypothesis import settings

from openwork_core.storage.postgres.connection import create_pool
from openwork_core.storage.postgres.store import PostgresStore
from tests.support.postgres import PgCluster, find_cluster
from tests.support.tiers import SLOW, MisplacedTest, Tier, run_order, tier_of

# No timing assertions in tests: hypothesis's 200 ms per-example deadline fails at random
# when two shared cores are busy; the properties are about values, not speed.
settings.register_profile("no_deadline", deadline=None)
settings.load_profile("no_deadline")


_CLUSTERS: list[PgCluster] = []
_TESTS = Path(__file__).parent


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> Generator[None]:
    """Each test's one tier from its directory (tests/support/tiers.py), before ``-m`` selects;
    after selection, the long poles first."""
    for item in items:
        try:
            tier = tier_of(item.path, _TESTS)
        except MisplacedTest as misplaced:
            raise pytest.UsageError(str(misplaced)) from None
        marked = {mark.name for mark in item.iter_markers()} & set(Tier)
        if marked - {tier}:
            raise pytest.UsageError(f"{item.nodeid} is marked {sorted(marked)} in tests/{tier}")
        item.add_marker(tier.value)
    yield
    items.sort(
        key=lambda item: run_order(
            tier_of(item.path, _TESTS), slow=item.get_closest_marker(SLOW) is not None
        )
    )


@pytest.fixture(scope="session")
def pg_cluster() -> PgCluster:
    cluster = asyncio.run(find_cluster())
    _CLUSTERS.append(cluster)
    asyncio.run(cluster.create_template())
    return cluster


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Drop this process's test databases after the last test, outside every test's timeout: a
    session fixture's teardown runs inside the last test's and DROP DATABASE is slow on a busy
    server."""
    while _CLUSTERS:
        asyncio.run(_CLUSTERS.pop().drop_all())


@pytest.fixture
async def database_url(pg_cluster: PgCluster) -> AsyncIterator[str]:
    """A fresh, migrated database for this test, dropped in the background after it."""
    url = await pg_cluster.new_database()
    yield url
    pg_cluster.drop_soon(url)


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[PostgresStore]:
    pool = await create_pool(database_url, max_size=5)
    try:
        yield PostgresStore(pool)
    finally:
        await pool.close()


@pytest.fixture(autouse=True)
async def _fail_on_unhandled_loop_exceptions() -> AsyncIterator[None]:
    """House style (DESIGN.md §4.8): an exception nobody handled on the loop fails the test."""
    loop = asyncio.get_running_loop()
    unhandled: list[str] = []

    def record(_loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
        unhandled.append(f"{context.get('message')}: {context.get('exception')!r}")

    previous = loop.get_exception_handler()
    loop.set_exception_handler(record)
    try:
        yield
    finally:
        loop.set_exception_handler(previous)
    assert not unhandled, "unhandled exceptions on the event loop:\n" + "\n".join(unhandled)
