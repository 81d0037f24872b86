"""Undo/reapply of file_change artifacts and their JSON form (tools.md §8, §10)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import orjson
import pytest

import openwork_tools.undo as undo_module
from openwork_tools.context import ToolSessionContext
from openwork_tools.errors import ChangeConflict, ChangeDenied, ChangeStateMismatch, RollbackFailed
from openwork_tools.modes import SandboxMode
from openwork_tools.registry import FinalizedToolset
from openwork_tools.results import FileChange
from openwork_tools.undo import ChangeDirection, apply_file_changes
from tests.support.tools import call_ctx

UNDO, REAPPLY = ChangeDirection.UNDO, ChangeDirection.REAPPLY
AUTO = SandboxMode.AUTO


async def change(
    toolset: FinalizedToolset, name: str, payload: dict[str, object], call_id: str
) -> FileChange:
    result = await toolset.call(name, json.dumps(payload), call_ctx(call_id))
    (artifact,) = result.artifacts
    return artifact


async def test_diffs_survive_reload(toolset: FinalizedToolset, workspace: Path) -> None:
    """tools.md §10: the stored artifact JSON rebuilds the same change."""
    (workspace / "d.txt").write_text("a\nb\nc\nd\ne\nf\ng\nh\n")
    await toolset.call("read", '{"path": "d.txt"}', call_ctx())
    artifact = await change(
        toolset, "edit", {"filePath": "d.txt", "oldString": "e\n", "newString": "E\nE2\n"}, "c1"
    )
    stored = orjson.loads(orjson.dumps(artifact.to_json()))
    assert FileChange.from_json(stored) == artifact
    assert [h.to_json() for h in artifact.hunks] == [
        {
            "oldStart": 2,
            "oldLines": 7,
            "newStart": 2,
            "newLines": 8,
            "lines": [" b\n", " c\n", " d\n", "-e\n", "+E\n", "+E2\n", " f\n", " g\n", " h\n"],
        }
    ]


async def test_undo_and_reapply_several_changes_to_one_path_in_order(
    toolset: FinalizedToolset, session: ToolSessionContext, workspace: Path
) -> None:
    """tools.md §8: undo in reverse order, reapply in order; created undo removes the file."""
    c1 = await change(toolset, "write", {"path": "u.txt", "content": "v1\n"}, "c1")
    c2 = await change(
        toolset, "edit", {"filePath": "u.txt", "oldString": "v1", "newString": "v2"}, "c2"
    )
    c3 = await change(
        toolset, "edit", {"filePath": "u.txt", "oldString": "v2", "newString": "v3"}, "c3"
    )
    undone = await apply_file_changes(session, (c1, c2, c3), UNDO, AUTO)
    assert [c.undone for c in undone] == [True, True, True]
    assert not (workspace / "u.txt").exists()
    redone = await apply_file_changes(session, undone, REAPPLY, AUTO)
    assert [c.undone for c in redone] == [False] * 3
    assert (workspace / "u.txt").read_text() == "v3\n"
    partial = await apply_file_changes(session, (c3,), UNDO, AUTO)
    assert (workspace / "u.txt").read_text() == "v2\n" and partial[0].undone


async def test_undo_conflict_overwrites_nothing(
    toolset: FinalizedToolset, session: ToolSessionContext, workspace: Path
) -> None:
    """tools.md §8: current hash != afterHash -> conflict, no overwrite."""
    c1 = await change(toolset, "write", {"path": "k.txt", "content": "mine\n"}, "c1")
    (workspace / "k.txt").write_text("user edit\n")
    with pytest.raises(ChangeConflict):
        await apply_file_changes(session, (c1,), UNDO, AUTO)
    assert (workspace / "k.txt").read_text() == "user edit\n"
    with pytest.raises(ChangeStateMismatch):
        await apply_file_changes(session, (c1,), REAPPLY, AUTO)


async def test_partial_failure_rolls_back(
    toolset: FinalizedToolset, session: ToolSessionContext, workspace: Path
) -> None:
    """tools.md §8: a later conflict rolls back the changes already undone."""
    cb = await change(toolset, "write", {"path": "b.txt", "content": "b\n"}, "cb")
    ca = await change(toolset, "write", {"path": "a.txt", "content": "a\n"}, "ca")
    (workspace / "b.txt").write_text("b changed by the user\n")
    with pytest.raises(ChangeConflict):
        await apply_file_changes(session, (cb, ca), UNDO, AUTO)
    assert (workspace / "a.txt").read_text() == "a\n"
    assert (workspace / "b.txt").read_text() == "b changed by the user\n"


async def test_undo_goes_through_the_fence(session: ToolSessionContext, home: Path) -> None:
    """tools.md §8: undo writes go through the file-tool fence; hard-protected stays protected."""
    target = home / ".openwork" / "x.txt"
    forged = FileChange(
        change_id="f",
        path=str(target),
        kind="created",
        additions=1,
        deletions=0,
        hunks=(),
        before_hash=None,
        after_hash="0" * 64,
        before_content=None,
        after_content="x",
    )
    with pytest.raises(ChangeDenied):
        await apply_file_changes(session, (forged,), UNDO, AUTO)


async def test_undo_never_follows_a_symlink_planted_where_the_change_wrote(
    toolset: FinalizedToolset, session: ToolSessionContext, workspace: Path, home: Path
) -> None:
    """tools.md §8: undo and reapply write the file the change wrote, not what its path leads to
    now. A model that swaps its file for a symlink to ``~/.bashrc`` holding the change's own
    content gets a conflict, not the user's start-up file overwritten (an edit's undo) or
    deleted (a create's undo); a symlinked parent directory counts the same."""
    bashrc = home / ".bashrc"
    bashrc.write_text("# the user's own\n")
    created = await change(toolset, "write", {"path": "h.txt", "content": "echo pwned\n"}, "c1")
    edited = await change(
        toolset, "write", {"path": "h.txt", "content": "# the user's own\n"}, "c2"
    )
    (workspace / "h.txt").unlink()
    (workspace / "h.txt").symlink_to(bashrc)
    for changes in ((created, edited), (edited,)):
        with pytest.raises(ChangeConflict, match="no longer the file"):
            await apply_file_changes(session, changes, UNDO, AUTO)
        assert bashrc.read_text() == "# the user's own\n"
    (workspace / "sub").mkdir()
    inner = await change(toolset, "write", {"path": "sub/h.txt", "content": "x\n"}, "c3")
    (workspace / "sub" / "h.txt").unlink()
    (workspace / "sub").rmdir()
    (workspace / "sub").symlink_to(home)
    (home / "h.txt").write_text("x\n")
    with pytest.raises(ChangeConflict, match="no longer the file"):
        await apply_file_changes(session, (inner,), UNDO, AUTO)
    assert (home / "h.txt").read_text() == "x\n"
    undone = dataclasses.replace(inner, undone=True)
    (home / "h.txt").unlink()
    with pytest.raises(ChangeConflict, match="no longer the file"):
        await apply_file_changes(session, (undone,), REAPPLY, AUTO)
    assert not (home / "h.txt").exists()


async def test_failed_rollback_is_reported(
    toolset: FinalizedToolset,
    session: ToolSessionContext,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """tools.md §8: rollback failure -> `RollbackFailed`."""
    cb = await change(toolset, "write", {"path": "b.txt", "content": "b\n"}, "cb")
    ca = await change(toolset, "write", {"path": "a.txt", "content": "a\n"}, "ca")
    (workspace / "b.txt").write_text("b changed by the user\n")
    real_put = undo_module._put

    def put_but_fail_rollbacks(
        checked: object, content: object, expected: object, verb: str
    ) -> None:
        if "rollback" in verb:
            raise OSError("disk gone")
        real_put(checked, content, expected, verb)  # type: ignore[arg-type]

    monkeypatch.setattr(undo_module, "_put", put_but_fail_rollbacks)
    with pytest.raises(RollbackFailed):
        await apply_file_changes(session, (cb, ca), UNDO, AUTO)
