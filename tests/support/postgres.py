"""The test database ladder (DESIGN.md §5): TEST_DATABASE_URL → the local server on
127.0.0.1:5432 (database ``test``) → testcontainers when a Docker engine answers → an embedded
pgserver in a temp dir. Never a silent skip: when nothing works the error lists what was tried."""

from __future__ import annotations

import asyncio
import os
import tempfile
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from openwork_core.storage.migrate import apply_migrations

LOCAL_URL = "postgresql://postgres@127.0.0.1:5432/test"


class NoPostgres(RuntimeError):
    pass


async def _answers(url: str) -> str | None:
    try:
        conn = await asyncpg.connect(url, timeout=5)
    except (TimeoutError, OSError, asyncpg.PostgresError) as exc:
        return f"{type(exc).__name__}: {exc}"
    await conn.close()
    return None


def with_database(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + database, parts.query, parts.fragment))


@dataclass
class PgCluster:
    """A server we may create databases on, with a migrated template."""

    admin_url: str
    origin: str
    template: str = ""
    created: list[str] = field(default_factory=list)
    cleanups: list[Callable[[], None]] = field(default_factory=list)
    dropping: list[tuple[str, Future[None]]] = field(default_factory=list)
    _dropper: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="drop-database")
    )

    async def _admin(self) -> asyncpg.Connection:
        return await asyncpg.connect(self.admin_url, timeout=10)

    async def create_template(self) -> None:
        self.template = f"openwork_tmpl_{uuid.uuid4().hex[:10]}"
        conn = await self._admin()
        try:
            await conn.execute(f'CREATE DATABASE "{self.template}"')
        finally:
            await conn.close()
        target = await asyncpg.connect(with_database(self.admin_url, self.template))
        try:
            await apply_migrations(target)
        finally:
            await target.close()

    async def new_database(self, *, migrated: bool = True) -> str:
        name = f"openwork_t_{uuid.uuid4().hex[:12]}"
        conn = await self._admin()
        try:
            if migrated:
                await conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{self.template}"')
            else:
                await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()
        self.created.append(name)
        return with_database(self.admin_url, name)

    def drop_soon(self, url: str) -> None:
        """Drop a database its test is done with on a thread of its own while the next tests
        run: each DROP DATABASE waits for a checkpoint, and hundreds of them at the end of a run
        took longer than the tests. A drop that fails is retried by ``drop_all``."""
        name = urlsplit(url).path.lstrip("/")
        self.created.remove(name)
        self.dropping.append((name, self._dropper.submit(asyncio.run, self._drop(name))))

    async def _drop(self, name: str) -> None:
        conn = await self._admin()
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await conn.close()

    async def drop_all(self) -> None:
        self._dropper.shutdown(wait=True)
        failed = [name for name, done in self.dropping if done.exception() is not None]
        self.dropping.clear()
        names = [name for name in [*failed, *self.created, self.template] if name]
        self.created.clear()
        lanes = 4

        async def drop(lane: int) -> None:
            conn = await self._admin()
            try:
                for name in names[lane::lanes]:
                    await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            finally:
                await conn.close()

        await asyncio.gather(*(drop(lane) for lane in range(lanes)))
        for cleanup in self.cleanups:
            cleanup()


async def find_cluster() -> PgCluster:
    tried: list[str] = []
    env_url = os.environ.get("TEST_DATABASE_URL")
    if env_url:
        problem = await _answers(env_url)
        if problem is None:
            return PgCluster(env_url, "TEST_DATABASE_URL")
        tried.append(f"TEST_DATABASE_URL={env_url}: {problem}")
    else:
        tried.append("TEST_DATABASE_URL: not set")
    problem = await _answers(LOCAL_URL)
    if problem is None:
        return PgCluster(LOCAL_URL, "local 127.0.0.1:5432")
    tried.append(f"{LOCAL_URL}: {problem}")
    cluster = await asyncio.to_thread(_try_testcontainers, tried)
    if cluster is None:
        cluster = await asyncio.to_thread(_try_pgserver, tried)
    if cluster is None:
        raise NoPostgres("no PostgreSQL for the tests; tried:\n  " + "\n  ".join(tried))
    return cluster


def _try_testcontainers(tried: list[str]) -> PgCluster | None:
    try:
        import docker  # type: ignore[import-untyped]

        docker.from_env().ping()
    except Exception as exc:
        tried.append(f"testcontainers: no Docker engine answers ({type(exc).__name__})")
        return None
    from testcontainers.postgres import PostgresContainer

    container = PostgresContainer("postgres:16-alpine", driver=None)
    container.start()
    url = container.get_connection_url().replace("postgresql+psycopg2", "postgresql")
    cluster = PgCluster(url, "testcontainers")
    cluster.cleanups.append(container.stop)
    return cluster


def _try_pgserver(tried: list[str]) -> PgCluster | None:
    try:
        import pgserver

        data_dir = tempfile.mkdtemp(prefix="openwork-test-pg-")
        server = pgserver.get_server(data_dir, cleanup_mode="delete")
        url = server.get_uri()
    except Exception as exc:
        tried.append(f"pgserver (embedded): {type(exc).__name__}: {exc}")
        return None
    cluster = PgCluster(url, "pgserver")
    cluster.cleanups.append(server.cleanup)
    return cluster
