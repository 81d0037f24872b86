"""E2E fixtures: a fake OpenAI-compatible provider on loopback and a daemon environment."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from tests.fakes.fake_provider import FakeProvider
from tests.support.daemon import Daemon, start_daemon
from tests.support.postgres import PgCluster


@pytest.fixture
def fake_provider() -> Iterator[FakeProvider]:
    with FakeProvider() as fake:
        yield fake


@pytest.fixture
def pgserver_folder() -> Iterator[Path]:
    """A folder for data an embedded PostgreSQL (pgserver) runs on. pgserver runs the server as its
    own user and opens the folders above the data directory for it; pytest's temp tree is re-locked
    to 0700 whenever another pytest process (an xdist worker) starts, so this lives in its own
    folder under the system temp directory instead."""
    folder = Path(tempfile.mkdtemp(prefix="openwork-embedded-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def embedded_home(pgserver_folder: Path) -> Path:
    """An OPENWORK_HOME for a daemon on the embedded PostgreSQL (see ``pgserver_folder``)."""
    return pgserver_folder / "home"


def provider_env(fake: FakeProvider, **overrides: str) -> dict[str, str]:
    return {
        "OPENWORK_PROVIDER": "openai-chat",
        "OPENWORK_PROVIDER_BASE_URL": fake.openai_base_url,
        "OPENWORK_PROVIDER_API_KEY": "fake-key",
        "OPENWORK_MODEL": "fake-model",
        "OPENWORK_MODEL_CONTEXT_WINDOW": "200000",
        "OPENWORK_MODEL_MAX_OUTPUT_TOKENS": "32000",
        **overrides,
    }


@dataclass
class Scripted:
    """One daemon per test module on the fake provider (the module's tests push their own steps)."""

    daemon: Daemon
    fake: FakeProvider


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def scripted(
    pg_cluster: PgCluster, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> AsyncIterator[Scripted]:
    """A module's own daemon on its own database; modules that need another shape define theirs."""
    home = tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1]) / "home"
    database_url = await pg_cluster.new_database()
    with FakeProvider() as fake:
        daemon = await start_daemon(home=home, database_url=database_url, env=provider_env(fake))
        try:
            yield Scripted(daemon, fake)
        finally:
            assert await daemon.stop() == 0


@pytest_asyncio.fixture(loop_scope="module")
async def client(scripted: Scripted) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the module's daemon; the fake's unused steps are dropped afterwards."""
    async with scripted.daemon.client() as http:
        yield http
    scripted.fake.clear()
