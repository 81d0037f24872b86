"""daemon-api.md §1 discovery: ``OPENWORK_HOME/daemon.json`` (0600) in a 0700 home, removed at a
clean shutdown only while it is still this daemon's."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from openwork_core.daemon.home import (
    discovery_path,
    read_discovery,
    remove_discovery,
    write_discovery,
)


def test_the_discovery_file_is_daemon_json_at_the_top_of_the_home_0600_in_a_0700_home(
    tmp_path: Path,
) -> None:
    """daemon-api.md §1: `OPENWORK_HOME/daemon.json` (mode 0600) with url, token, pid, version."""
    home = tmp_path / "home"
    path = write_discovery(home, "http://127.0.0.1:7420", "secret", "1.2.3")
    assert path == discovery_path(home) == home / "daemon.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert json.loads(path.read_text()) == {
        "url": "http://127.0.0.1:7420",
        "token": "secret",
        "pid": os.getpid(),
        "version": "1.2.3",
    }
    assert [p.name for p in home.iterdir()] == ["daemon.json"]  # no temporary file left


def test_a_home_that_was_open_to_others_is_made_0700_before_the_token_is_written(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    os.chmod(home, 0o755)
    write_discovery(home, "http://127.0.0.1:1", "t", "v")
    assert stat.S_IMODE(home.stat().st_mode) == 0o700


def test_a_clean_shutdown_removes_only_its_own_discovery_file(tmp_path: Path) -> None:
    """daemon-api.md §1: removed at clean shutdown; another daemon's file (another URL) stays."""
    home = tmp_path / "home"
    write_discovery(home, "http://127.0.0.1:1", "t", "v")
    remove_discovery(home, "http://127.0.0.1:2")
    assert read_discovery(home) is not None
    remove_discovery(home, "http://127.0.0.1:1")
    assert not discovery_path(home).exists()
