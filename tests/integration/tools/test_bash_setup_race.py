"""A host socket that disappears between the profile's listing and bwrap's mount
(docs/reliability.md "The sandbox"; tools.md §7 bash). The profile covers every host socket by its path, so another
process removing its socket directory at the wrong moment failed bwrap's setup ("Can't mkdir
parents … Read-only file system") and the call came back ``sandbox_unavailable``: CI saw it when
another test's daemon removed its directory. The setup is now built again from a fresh listing,
and only when the command provably did not run.

Real bwrap, real sockets; the race is made certain by removing the directory right after the
listing that saw it.
"""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

import openwork_tools.sandbox.bwrap as bwrap_module
from openwork_tools.registry import FinalizedToolset
from openwork_tools.results import ToolErrorCode, ToolStatus
from openwork_tools.sandbox.launch import SETUP_ATTEMPTS
from tests.support.tools import call_ctx

COUNT = "echo ran >> count.txt"


@pytest.fixture
def listening(tmp_path: Path) -> Iterator[Path]:
    """A real unix socket bound by this process in a directory of its own."""
    directory = tmp_path / "agent"
    directory.mkdir()
    path = directory / "ctl.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        server.listen()
        yield path


async def bash(
    toolset: FinalizedToolset, command: str
) -> tuple[ToolStatus, str, ToolErrorCode | None]:
    result = await toolset.call("bash", json.dumps({"command": command}), call_ctx())
    code = result.error.code if result.error is not None else None
    return result.status, result.text, code


async def test_a_socket_removed_after_the_listing_costs_a_new_sandbox_not_the_call(
    toolset: FinalizedToolset, workspace: Path, listening: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first profile covers a socket whose directory is gone when bwrap mounts: bwrap fails
    before the command; the second profile, from a fresh listing, runs it exactly once."""
    real = bwrap_module.host_sockets
    listings: list[list[Path]] = []

    def racing() -> list[Path]:
        found = real()
        if not listings:
            assert listing_has(found, listening)
            shutil.rmtree(listening.parent)  # the owner cleans up right after the listing
        listings.append(found)
        return found

    monkeypatch.setattr(bwrap_module, "host_sockets", racing)
    status, text, code = await bash(toolset, COUNT)
    assert (status, code) == (ToolStatus.SUCCEEDED, None), text
    assert len(listings) == 2 and not listing_has(listings[1], listening)
    assert (workspace / "count.txt").read_text() == "ran\n"


async def test_a_setup_that_keeps_failing_is_reported_and_the_command_never_ran(
    toolset: FinalizedToolset, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every listing names a socket under a directory that does not exist: after the last attempt
    the call is ``sandbox_unavailable`` with bwrap's own reason, and nothing ran."""
    ghost = tmp_path / "gone" / "ghost.sock"
    attempts: list[None] = []

    def ghostly() -> list[Path]:
        attempts.append(None)
        return [ghost]

    monkeypatch.setattr(bwrap_module, "host_sockets", ghostly)
    status, text, code = await bash(toolset, COUNT)
    assert (status, code) == (ToolStatus.FAILED, ToolErrorCode.SANDBOX_UNAVAILABLE)
    assert "bwrap: Can't mkdir parents" in text and str(ghost.parent) in text
    assert len(attempts) == SETUP_ATTEMPTS
    assert not (workspace / "count.txt").exists()


async def test_a_command_that_fails_like_bwrap_is_never_run_again(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """A command that prints bwrap's words and exits 1 did run: it is not started a second
    time, whatever its output claims."""
    spoof = f'{COUNT}; echo "bwrap: Can\'t mkdir parents for /x: Read-only file system" >&2; exit 1'
    await bash(toolset, spoof)
    assert (workspace / "count.txt").read_text() == "ran\n"


def listing_has(listing: list[Path], path: Path) -> bool:
    return path.resolve() in listing
