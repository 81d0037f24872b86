"""The unit tier is honest (issue 23 point 8): a unit test starts no process, opens no connection
(network, loopback or database) and has no database. One that needs them belongs in
tests/integration or tests/e2e; the guard says so, and fails the test even where the code under
test caught the refusal."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NoReturn

import pytest

from tests.support.tiers import MOVE_IT, UnitTierViolation, refusing_processes_and_connections


@pytest.fixture(autouse=True)
def unit_tier_attempts() -> Iterator[list[str]]:
    """What this unit test tried and was refused; the test fails at teardown unless it is empty."""
    attempts: list[str] = []
    with refusing_processes_and_connections(attempts):
        yield attempts
    assert not attempts, f"this unit test tried to {'; '.join(attempts)} ({MOVE_IT})"


@pytest.fixture
def pg_cluster() -> NoReturn:
    """Unit tests have no database (the PostgreSQL fixtures are in tests/conftest.py)."""
    raise UnitTierViolation(f"a unit test has no database ({MOVE_IT})")
