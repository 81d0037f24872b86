"""E2E fixtures: a fake OpenAI-compatible provider on loopback and a daemon environment."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.fake_provider import FakeProvider


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
