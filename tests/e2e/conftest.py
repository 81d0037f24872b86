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
def embedded_home() -> Iterator[Path]:
    """An OPENWORK_HOME for a daemon on the embedded PostgreSQL. pgserver runs the server as its
    own user and opens the folders up to the data directory for it; pytest's temp tree is re-locked
    to 0700 whenever another pytest process (an xdist worker) starts, so the home lives in its own
    folder under /tmp instead."""
    folder = Path(tempfile.mkdtemp(prefix="openwork-embedded-"))
    try:
        yield folder / "home"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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
