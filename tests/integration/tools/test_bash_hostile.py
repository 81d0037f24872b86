"""Issue 22 at the tool level, with real bwrap: bash's own /tmp, the start-up files of the
user's shell and tools, the session's spill total."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

import openwork_tools.spill as spill_module
from openwork_tools.context import ToolSessionContext
from openwork_tools.registry import FinalizedToolset
from openwork_tools.results import ToolStatus
from tests.support.tools import call_ctx


async def _bash(toolset: FinalizedToolset, command: str, call_id: str = "call_1") -> str:
    result = await toolset.call("bash", json.dumps({"command": command}), call_ctx(call_id))
    return result.text


async def test_bash_sees_the_sessions_own_tmp_and_never_the_hosts(
    toolset: FinalizedToolset, session: ToolSessionContext
) -> None:
    """Issue 22 point 2: a host file in /tmp is not there; what bash leaves in /tmp is there
    for its next call and is the session's temp dir on the host (TMPDIR is /tmp)."""
    host = Path("/tmp") / f"openwork-host-{uuid.uuid4().hex}"
    host.write_text("host\n")
    try:
        first = await _bash(toolset, f"cat {host}; echo kept > /tmp/note; echo $TMPDIR", "c1")
        second = await _bash(toolset, "cat /tmp/note", "c2")
    finally:
        host.unlink()
    assert "No such file or directory" in first and "host\n" not in first
    assert "/tmp\n" in first
    assert second.startswith("kept\n")
    assert session.temp_dir is not None
    assert (session.temp_dir / "note").read_text() == "kept\n"


START_UP_FILES = (".bashrc", ".profile", ".config/fish/config.fish", ".config/git/config")


async def test_shell_and_tool_start_up_files_outside_the_workspace_are_not_writable(
    toolset: FinalizedToolset, home: Path
) -> None:
    """Issue 22 point 3: ~/.bashrc, ~/.profile and ~/.config/**/…rc run later outside any
    sandbox; neither bash (in auto) nor write can change them."""
    for name in START_UP_FILES:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text("# user's\n")
    appends = "; ".join(f"echo evil >> {home / name}" for name in START_UP_FILES)
    await _bash(toolset, appends)
    for i, name in enumerate(START_UP_FILES):
        payload = json.dumps({"path": str(home / name), "content": "evil\n"})
        result = await toolset.call("write", payload, call_ctx(f"w{i}"))
        assert result.status is ToolStatus.DENIED, result.text
    assert all((home / name).read_text() == "# user's\n" for name in START_UP_FILES)


async def test_the_spill_files_of_a_session_are_capped_in_total(
    toolset: FinalizedToolset, session: ToolSessionContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22 point 5: each spill file gets what the session's others leave of the total;
    once it is used up nothing more is saved, and the result says so."""
    monkeypatch.setattr(spill_module, "SPILL_FILE_LIMIT", 100_000)
    monkeypatch.setattr(spill_module, "SESSION_SPILL_LIMIT", 150_000)
    await _bash(toolset, "seq 1 200000", "c1")
    second = await _bash(toolset, "seq 1 200000", "c2")
    third = await _bash(toolset, "seq 1 200000", "c3")
    assert session.spill_dir is not None
    assert (session.spill_dir / "c1.txt").stat().st_size == 100_000
    assert (session.spill_dir / "c2.txt").stat().st_size == 50_000
    assert "Only the first 50000 bytes were saved" in second
    assert not (session.spill_dir / "c3.txt").exists()
    assert "nothing was saved: this session's saved output reached its 0 MB total" in third
