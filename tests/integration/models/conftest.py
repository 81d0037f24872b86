"""The fake provider on loopback, one per test; a test fails if any request broke an invariant."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.fake_provider import FakeProvider


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider
        assert provider.violations == []
