"""The write and edit tools (tools.md §7 write/edit, §7.4, §8 file_change, §10)."""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path

import pytest

from openwork_tools.builtin import mutation
from openwork_tools.registry import FinalizedToolset
from openwork_tools.results import FileChange, ToolResult, ToolStatus
from tests.support.tools import call_ctx


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


async def call(
    toolset: FinalizedToolset, name: str, payload: str, call_id: str = "c1"
) -> ToolResult:
    return await toolset.call(name, payload, call_ctx(call_id))


async def test_write_creates_missing_file_and_parents_without_a_prior_read(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §7 write, §10: new files need no read; summary `Created src/new.rs (+42)`."""
    result = await call(toolset, "write", '{"path": "src/deep/new.rs", "content": "a\\nb\\n"}')
    assert (result.status, result.text) == (ToolStatus.SUCCEEDED, "Created src/deep/new.rs (+2)")
    assert (workspace / "src" / "deep" / "new.rs").read_text() == "a\nb\n"
    (change,) = result.artifacts
    assert isinstance(change, FileChange)
    assert change.to_json() == {
        "type": "file_change",
        "changeId": "c1",
        "path": "src/deep/new.rs",
        "kind": "created",
        "additions": 2,
        "deletions": 0,
        "hunks": [
            {"oldStart": 0, "oldLines": 0, "newStart": 1, "newLines": 2, "lines": ["+a\n", "+b\n"]}
        ],
        "beforeHash": None,
        "afterHash": sha("a\nb\n"),
        "beforeContent": None,
        "afterContent": "a\nb\n",
        "undone": False,
    }


async def test_overwrite_requires_a_read_and_reports_the_line_delta(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §7.4: unread file refused; after read: `Overwrote old.rs (+30 -12)`-style."""
    (workspace / "old.rs").write_text("keep\ndrop1\ndrop2\n")
    refused = await call(toolset, "write", '{"path": "old.rs", "content": "x\\n"}')
    assert (refused.status, refused.text) == (ToolStatus.FAILED, "Read old.rs before editing it.")
    await call(toolset, "read", '{"path": "old.rs"}')
    result = await call(toolset, "write", '{"path": "old.rs", "content": "keep\\nnew\\n"}')
    assert result.text == "Overwrote old.rs (+1 -2)"
    (change,) = result.artifacts
    assert change.kind == "modified" and change.before_content == "keep\ndrop1\ndrop2\n"


async def test_identical_write_reports_unchanged_without_an_artifact(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §7 write: `src/new.rs unchanged: the content is identical`."""
    (workspace / "same.txt").write_text("same\n")
    await call(toolset, "read", '{"path": "same.txt"}')
    result = await call(toolset, "write", '{"path": "same.txt", "content": "same\\n"}')
    assert (result.text, result.artifacts) == ("same.txt unchanged: the content is identical", ())


async def test_file_changed_since_read_is_refused(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §7.4: observed hash differs from disk -> the changed-since text, no overwrite."""
    target = workspace / "c.txt"
    target.write_text("v1\n")
    await call(toolset, "read", '{"path": "c.txt"}')
    target.write_text("v2 by the user\n")
    for name, payload in [
        ("write", '{"path": "c.txt", "content": "mine\\n"}'),
        ("edit", '{"filePath": "c.txt", "oldString": "v2", "newString": "v3"}'),
    ]:
        result = await call(toolset, name, payload)
        assert result.text == (
            "c.txt changed since you last read it (by you via bash, or by the user). "
            "Read it again before editing."
        )
    assert target.read_text() == "v2 by the user\n"


async def test_write_rejects_content_over_one_mib(toolset: FinalizedToolset) -> None:
    """tools.md §7 write: content <= 1 MiB."""
    payload = '{"path": "big.txt", "content": "' + "x" * (1_048_577) + '"}'
    result = await call(toolset, "write", payload)
    assert result.status is ToolStatus.FAILED and "1048576" in result.text


@pytest.mark.parametrize(
    ("old", "new", "replace_all", "expected"),
    [
        ("line5\\n", "LINE5\\n", False, "Edited e.rs:5 (+1 -1)"),
        ("line2\\nline3\\n", "a\\nb\\nc\\nd\\n", False, "Edited e.rs:2-5 (+4 -2)"),
        ("dup", "DUP", True, "Replaced 2 occurrences in e.rs (+2 -2)"),
    ],
)
async def test_edit_summaries(
    toolset: FinalizedToolset,
    workspace: Path,
    old: str,
    new: str,
    replace_all: bool,
    expected: str,
) -> None:
    """tools.md §7 edit: one-line summaries with the new content's line range."""
    (workspace / "e.rs").write_text("line1\nline2\nline3\ndup\nline5\ndup\n")
    await call(toolset, "read", '{"path": "e.rs"}')
    flag = "true" if replace_all else "false"
    payload = (
        f'{{"filePath": "e.rs", "oldString": "{old}", "newString": "{new}", "replaceAll": {flag}}}'
    )
    result = await call(toolset, "edit", payload)
    assert (result.status, result.text) == (ToolStatus.SUCCEEDED, expected)


async def test_edit_with_empty_old_string_creates_a_new_file(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §7 edit: empty oldString = create; summary `Created src/new.rs (+4)`."""
    result = await call(
        toolset,
        "edit",
        '{"filePath": "n/new.rs", "oldString": "", "newString": "1\\n2\\n3\\n4\\n"}',
    )
    assert result.text == "Created n/new.rs (+4)"
    assert (workspace / "n" / "new.rs").read_text() == "1\n2\n3\n4\n"


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (
            '{"filePath": "f.txt", "oldString": "a", "newString": "a"}',
            "oldString and newString are identical; nothing to change.",
        ),
        (
            '{"filePath": "f.txt", "oldString": "zzz", "newString": "b"}',
            "oldString not found in f.txt.",
        ),
        (
            '{"filePath": "f.txt", "oldString": "a", "newString": "b"}',
            "oldString occurs 2 times in f.txt;",
        ),
        (
            '{"filePath": "f.txt", "oldString": "", "newString": "b"}',
            "oldString is empty but f.txt already exists;",
        ),
        (
            '{"filePath": "missing.txt", "oldString": "a", "newString": "b"}',
            "File not found: missing.txt.",
        ),
    ],
)
async def test_edit_failure_cases(
    toolset: FinalizedToolset, workspace: Path, payload: str, expected: str
) -> None:
    """tools.md §7 edit, §10: old == new, not found, ambiguous, empty old on existing file."""
    (workspace / "f.txt").write_text("a\na\n")
    await call(toolset, "read", '{"path": "f.txt"}')
    result = await call(toolset, "edit", payload)
    assert result.status is ToolStatus.FAILED and result.text.startswith(expected)
    assert (workspace / "f.txt").read_text() == "a\na\n"


async def test_consecutive_edits_need_no_reread(toolset: FinalizedToolset, workspace: Path) -> None:
    """tools.md §7.4, §10: a successful edit updates the observation."""
    (workspace / "s.txt").write_text("one two three\n")
    await call(toolset, "read", '{"path": "s.txt"}')
    for old, new in [("one", "1"), ("two", "2"), ("three", "3")]:
        result = await call(
            toolset, "edit", f'{{"filePath": "s.txt", "oldString": "{old}", "newString": "{new}"}}'
        )
        assert result.status is ToolStatus.SUCCEEDED, result.text
    assert (workspace / "s.txt").read_text() == "1 2 3\n"


async def test_concurrent_edits_of_one_path_are_serialised_by_its_lock(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §7 edit: the per-real-path write lock keeps both edits; none is lost."""
    (workspace / "p.txt").write_text("A\nB\n")
    await call(toolset, "read", '{"path": "p.txt"}')
    results = await asyncio.gather(
        call(toolset, "edit", '{"filePath": "p.txt", "oldString": "A", "newString": "a"}', "e1"),
        call(toolset, "edit", '{"filePath": "./p.txt", "oldString": "B", "newString": "b"}', "e2"),
    )
    assert [r.status for r in results] == [ToolStatus.SUCCEEDED] * 2
    assert (workspace / "p.txt").read_text() == "a\nb\n"


async def test_change_between_check_and_rename_is_detected(
    toolset: FinalizedToolset, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tools.md §7 edit, §10: the atomic write re-compares before rename."""
    target = workspace / "r.txt"
    target.write_text("base\n")
    await call(toolset, "read", '{"path": "r.txt"}')
    real_load = mutation.load_current

    def load_then_someone_writes(checked: object) -> mutation.Current:
        current = real_load(checked)  # type: ignore[arg-type]
        target.write_text("sneaky\n")
        return current

    monkeypatch.setattr(mutation, "load_current", load_then_someone_writes)
    result = await call(
        toolset, "edit", '{"filePath": "r.txt", "oldString": "base", "newString": "x"}'
    )
    assert result.text == "file changed while edit was being prepared"
    assert target.read_text() == "sneaky\n"
    assert os.listdir(workspace) == ["r.txt"]


async def test_non_utf8_target_is_refused(toolset: FinalizedToolset, workspace: Path) -> None:
    """tools.md §7 write/edit: the existing file must be UTF-8 text."""
    (workspace / "l1.txt").write_bytes(b"caf\xe9\n")
    result = await call(toolset, "write", '{"path": "l1.txt", "content": "x"}')
    assert result.status is ToolStatus.FAILED and "UTF-8" in result.text


async def test_write_preserves_the_file_mode(toolset: FinalizedToolset, workspace: Path) -> None:
    """tools.md §6: atomic write (temp + rename) keeps the target's permissions."""
    script = workspace / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    await call(toolset, "read", '{"path": "run.sh"}')
    await call(toolset, "write", '{"path": "run.sh", "content": "#!/bin/sh\\necho hi\\n"}')
    assert script.stat().st_mode & 0o777 == 0o755


def test_prepare_reports_protected_targets_and_escalation(
    toolset: FinalizedToolset, home: Path
) -> None:
    """tools.md §6: write/edit -> protected_target text; escalation = normalised grants."""
    prepared = toolset.prepare("write", f'{{"path": "{home}/.openwork/x", "content": ""}}')
    assert prepared is not None
    assert prepared.protected_target == (
        f"[sandbox: {(home / '.openwork' / 'x').resolve()} is protected and cannot be written "
        "in any mode; do not retry]"
    )
    assert toolset.prepare("read", '{"path": "x"}') is None
    escalated = toolset.prepare(
        "edit",
        '{"filePath": "/srv/x", "oldString": "a", "newString": "b", "justification": " fix ",'
        ' "sandboxPermissions": {"paths": [{"path": "/srv/x", "access": "write", "scope": "exact"}]}}',
    )
    assert escalated is not None and escalated.escalation is not None
    assert escalated.escalation.justification == "fix"
    assert [str(g.path) for g in escalated.escalation.grants] == ["/srv/x"]
    assert escalated.escalation.error is None
    broad = toolset.prepare(
        "write",
        '{"path": "a", "content": "", "sandboxPermissions": {"paths": [{"path": "/",'
        ' "access": "write", "scope": "subtree"}]}}',
    )
    assert broad is not None and broad.escalation is not None
    assert broad.escalation.error == "subtree access to / is too broad; list narrower paths"


def test_unknown_fields_in_sandbox_permissions_are_rejected(toolset: FinalizedToolset) -> None:
    """permissions-sandbox.md §4: `sandboxPermissions` rejects unknown fields."""
    payload = '{"path": "a", "content": "", "sandboxPermissions": {"paths": [], "all": true}}'
    assert toolset.prepare("write", payload) is None


async def test_filesystem_errors_are_results_with_the_path(
    toolset: FinalizedToolset, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tools.md §3: tool failures are results, never exceptions (here: the disk refuses)."""

    def refuse(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(mutation, "atomic_replace", refuse)
    result = await call(toolset, "write", '{"path": "full.txt", "content": "x"}')
    assert (result.status, result.text) == (
        ToolStatus.FAILED,
        "Cannot write full.txt: No space left on device",
    )
