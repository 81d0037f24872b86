"""The test tiers (issue 23 point 8): a test's one tier is its directory, the long poles start
first, and the unit tier refuses processes, connections and the database."""

from __future__ import annotations

import asyncio
import socket
import subprocess
from pathlib import Path

import pytest

from tests.support.tiers import (
    MisplacedTest,
    Tier,
    UnitTierViolation,
    run_order,
    tier_of,
)

TESTS = Path(__file__).parents[1]


def test_a_tests_tier_is_the_directory_it_lives_in_under_tests() -> None:
    """Issue 23 point 8: tests/unit → unit, tests/integration → integration, tests/e2e → e2e;
    anywhere else is refused rather than left without a tier."""
    assert tier_of(TESTS / "unit" / "a" / "test_x.py", TESTS) is Tier.UNIT
    assert tier_of(TESTS / "integration" / "test_x.py", TESTS) is Tier.INTEGRATION
    assert tier_of(TESTS / "e2e" / "test_x.py", TESTS) is Tier.E2E
    for misplaced in (TESTS / "support" / "test_x.py", TESTS / "test_x.py", Path("/elsewhere")):
        with pytest.raises(MisplacedTest, match="every test lives under one of tests/unit"):
            tier_of(misplaced, TESTS)


def test_this_unit_test_carries_exactly_the_unit_tier(request: pytest.FixtureRequest) -> None:
    """Issue 23 point 8: the collection hook marks each test with its directory's tier, once."""
    tiers = [mark.name for mark in request.node.iter_markers() if mark.name in set(Tier)]
    assert tiers == ["unit"]


def test_slow_tests_then_e2e_then_integration_then_unit_start_first() -> None:
    """Issue 23 point 8: the longest items start first, so the run does not end on one."""
    order = sorted(
        [(Tier.UNIT, False), (Tier.INTEGRATION, False), (Tier.UNIT, True), (Tier.E2E, False)],
        key=lambda case: run_order(case[0], slow=case[1]),
    )
    assert order == [
        (Tier.UNIT, True),
        (Tier.E2E, False),
        (Tier.INTEGRATION, False),
        (Tier.UNIT, False),
    ]


def test_a_unit_test_cannot_start_a_process_or_bind_a_socket(
    unit_tier_attempts: list[str],
) -> None:
    """Issue 23 point 8: a process and a bound socket are refused with a message that says where
    the test belongs; each is recorded, so a test whose code swallowed the refusal still fails
    at teardown."""
    with pytest.raises(UnitTierViolation, match="move this test to tests/integration"):
        subprocess.run(["true"], check=False)
    with socket.socket() as tcp, pytest.raises(UnitTierViolation, match="bind a socket"):
        tcp.bind(("127.0.0.1", 0))
    assert len(unit_tier_attempts) == 2, unit_tier_attempts
    unit_tier_attempts.clear()  # the refusals were this test's point


async def test_a_unit_test_cannot_start_a_process_or_connect_from_the_loop(
    unit_tier_attempts: list[str],
) -> None:
    """Issue 23 point 8: asyncio's processes and connections, TCP and unix (so PostgreSQL's
    socket too), are refused the same way."""
    with pytest.raises(UnitTierViolation, match="start a process"):
        await asyncio.create_subprocess_exec("true")
    with pytest.raises(UnitTierViolation, match="open a connection"):
        await asyncio.open_connection("127.0.0.1", 5432)
    with pytest.raises(UnitTierViolation, match="open a connection"):
        await asyncio.open_unix_connection("/var/run/postgresql/.s.PGSQL.5432")
    assert len(unit_tier_attempts) == 3, unit_tier_attempts
    unit_tier_attempts.clear()


def test_a_unit_test_has_no_database(request: pytest.FixtureRequest) -> None:
    """Issue 23 point 8: the PostgreSQL fixtures refuse in tests/unit."""
    with pytest.raises(UnitTierViolation, match="a unit test has no database"):
        request.getfixturevalue("database_url")
