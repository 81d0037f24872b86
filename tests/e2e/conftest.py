"""E2E fixtures: a fake OpenAI-compatible provider on loopback and a daemon environment."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.fake_provider import FakeProvider


@pytest.fixture
def fake_provider() -> Iterator[FakeProvider]:
    with FakeProvider() as fake:
        yield fake


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
