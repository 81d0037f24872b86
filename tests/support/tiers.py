"""The test tiers (issue 23 point 8). A test's tier is the directory it lives in under tests/:
nobody keeps a list. ``unit`` starts no process and opens no connection and has no database
(tests/unit/conftest.py refuses them); ``integration`` uses real PostgreSQL, processes and
loopback servers in the test's own process; ``e2e`` drives a real ``openwork`` process. ``slow``
is marked by hand on the tests that take tens of seconds."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Any, NoReturn

import pytest


class Tier(StrEnum):
    UNIT = "unit"
    INTEGRATION = "integration"
    E2E = "e2e"


SLOW = "slow"


class MisplacedTest(ValueError):
    """A test outside tests/unit, tests/integration and tests/e2e."""


def tier_of(path: Path, tests_root: Path) -> Tier:
    """The first directory of ``path`` under ``tests_root`` names its tier."""
    try:
        return Tier(path.relative_to(tests_root).parts[0])
    except (ValueError, IndexError):
        tiers = ", ".join(f"tests/{tier}" for tier in Tier)
        raise MisplacedTest(f"{path}: every test lives under one of {tiers}") from None


def run_order(tier: Tier, *, slow: bool) -> int:
    """Where a test starts in a run: the long poles first (the slow ones, then e2e, integration,
    unit), so that xdist's workers end on short tests instead of waiting on one long one."""
    by_tier = (Tier.E2E, Tier.INTEGRATION, Tier.UNIT)
    return 0 if slow else 1 + by_tier.index(tier)


MOVE_IT = "move this test to tests/integration or tests/e2e"


class UnitTierViolation(RuntimeError):
    """A unit test tried to start a process or open a connection."""


@contextmanager
def refusing_processes_and_connections(attempts: list[str]) -> Iterator[None]:
    """Within: starting a process, connecting or binding a socket (so PostgreSQL too) raises
    ``UnitTierViolation`` and is recorded in ``attempts``, for the code under test may catch it.
    Only on the test's own thread: a worker that ran an integration test before may still be
    dropping its database on a background thread, which is not this test's doing."""
    owner = threading.get_ident()

    def refuse(what: str) -> NoReturn:
        attempts.append(what)
        raise UnitTierViolation(f"a unit test must not {what} ({MOVE_IT})")

    def guarded(original: Callable[..., Any], describe: Callable[..., str]) -> Callable[..., Any]:
        def check(*args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() != owner:
                return original(*args, **kwargs)
            refuse(describe(*args))

        return check

    def process(*args: object) -> str:
        command = [a for a in args if not isinstance(a, subprocess.Popen)]
        return f"start a process {command!r:.160}"

    def connection(_sock: object, address: object = None, *_rest: object) -> str:
        return f"open a connection to {address!r}"

    def binding(_sock: object, address: object = None) -> str:
        return f"bind a socket to {address!r}"

    with pytest.MonkeyPatch.context() as patch:
        # Popen's own __init__: every way the standard library starts a process goes through it
        # (asyncio's subprocess transports too), however its name was imported
        patch.setattr(subprocess.Popen, "__init__", guarded(subprocess.Popen.__init__, process))
        for name in ("create_subprocess_exec", "create_subprocess_shell"):
            patch.setattr(asyncio, name, guarded(getattr(asyncio, name), process))
        for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system"):
            patch.setattr(os, name, guarded(getattr(os, name), process))
        patch.setattr(socket.socket, "connect", guarded(socket.socket.connect, connection))
        patch.setattr(socket.socket, "connect_ex", guarded(socket.socket.connect_ex, connection))
        patch.setattr(socket.socket, "bind", guarded(socket.socket.bind, binding))
        yield
