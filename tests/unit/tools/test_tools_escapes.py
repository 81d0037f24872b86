"""Fence escape attempts through the file tools: 0 escapes (tools.md §6, §10)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from openwork_tools.modes import SandboxMode
from openwork_tools.registry import FinalizedToolset
from openwork_tools.results import ToolStatus
from tests.support.tools import call_ctx


def snapshot(root: Path, skip: Path) -> dict[str, str]:
    """Every path under ``root`` except the workspace, with its content or link target."""
    seen: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if here == skip or skip in here.parents:
            dirnames.clear()
            continue
        for name in [*dirnames, *filenames]:
            path = here / name
            if path.is_symlink():
                seen[str(path)] = "-> " + os.readlink(path)
            elif path.is_file():
                seen[str(path)] = path.read_bytes().hex()
            else:
                seen[str(path)] = "dir"
    return seen


Attempt = Callable[[Path, Path, Path], tuple[str, str]]

ATTEMPTS: dict[str, Attempt] = {
    "write-dotdot": lambda h, ws, out: (
        "write",
        '{"path": "../../outside/victim.txt", "content": "pwned"}',
    ),
    "write-dotdot-new": lambda h, ws, out: (
        "write",
        '{"path": "../../outside/new.txt", "content": "pwned"}',
    ),
    "write-absolute": lambda h, ws, out: (
        "write",
        f'{{"path": "{out}/victim.txt", "content": "pwned"}}',
    ),
    "write-symlink-file": lambda h, ws, out: ("write", '{"path": "to_victim", "content": "pwned"}'),
    "write-symlinked-parent": lambda h, ws, out: (
        "write",
        '{"path": "to_outside/new.txt", "content": "pwned"}',
    ),
    "write-dangling-symlink": lambda h, ws, out: (
        "write",
        '{"path": "dangling", "content": "pwned"}',
    ),
    "write-through-dangling-dir": lambda h, ws, out: (
        "write",
        '{"path": "dangling_dir/x.txt", "content": "pwned"}',
    ),
    "write-credential": lambda h, ws, out: (
        "write",
        f'{{"path": "{h}/.ssh/authorized_keys", "content": "pwned"}}',
    ),
    "write-openwork-home": lambda h, ws, out: (
        "write",
        f'{{"path": "{h}/.openwork/config", "content": "pwned"}}',
    ),
    "write-home-dotdot": lambda h, ws, out: ("write", '{"path": "../.bashrc", "content": "pwned"}'),
    "edit-symlink-file": lambda h, ws, out: (
        "edit",
        '{"filePath": "to_victim", "oldString": "untouched", "newString": "pwned"}',
    ),
    "edit-absolute": lambda h, ws, out: (
        "edit",
        f'{{"filePath": "{out}/victim.txt", "oldString": "untouched", "newString": "pwned"}}',
    ),
    "edit-create-symlinked-parent": lambda h, ws, out: (
        "edit",
        '{"filePath": "to_outside/e.txt", "oldString": "", "newString": "pwned"}',
    ),
    "edit-create-dangling": lambda h, ws, out: (
        "edit",
        '{"filePath": "dangling", "oldString": "", "newString": "pwned"}',
    ),
    "read-credential-symlink": lambda h, ws, out: ("read", '{"path": "to_ssh/id_rsa"}'),
    "grep-credential-symlink": lambda h, ws, out: (
        "grep",
        '{"pattern": "SECRET", "path": "to_ssh"}',
    ),
    "list-credential-dotdot": lambda h, ws, out: ("list", '{"path": "../.ssh"}'),
}


@pytest.mark.parametrize("mode", list(SandboxMode))
@pytest.mark.parametrize("attempt", list(ATTEMPTS.values()), ids=list(ATTEMPTS))
async def test_no_escape_changes_anything_outside_the_workspace(
    toolset: FinalizedToolset,
    tmp_path: Path,
    home: Path,
    workspace: Path,
    outside: Path,
    attempt: Attempt,
    mode: SandboxMode,
) -> None:
    """tools.md §10: symlink/`..`/absolute escapes for writes denied, credential reads denied,
    dangling symlink on create denied — and nothing outside the workspace changes."""
    (workspace / "to_victim").symlink_to(outside / "victim.txt")
    (workspace / "to_outside").symlink_to(outside)
    (workspace / "dangling").symlink_to(outside / "created-by-escape.txt")
    (workspace / "dangling_dir").symlink_to(outside / "missing-dir")
    (workspace / "to_ssh").symlink_to(home / ".ssh")
    (home / ".bashrc").write_text("# rc\n")
    before = snapshot(tmp_path, workspace)
    ctx = call_ctx(mode=mode)
    await toolset.call("read", '{"path": "to_victim"}', ctx)
    name, payload = attempt(home, workspace, outside)
    result = await toolset.call(name, payload, ctx)
    assert result.status is ToolStatus.DENIED, result.text
    assert "SECRET" not in result.text and "pwned" not in result.text
    assert snapshot(tmp_path, workspace) == before
