"""The list and glob tools (tools.md §7 list, glob; §9; §10)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openwork_tools.builtin import walk
from openwork_tools.context import ToolSessionContext
from openwork_tools.registry import FinalizedToolset
from openwork_tools.results import ToolErrorCode, ToolStatus
from tests.support.tools import call_ctx


async def run(toolset: FinalizedToolset, name: str, payload: str) -> str:
    result = await toolset.call(name, payload, call_ctx())
    assert result.status is ToolStatus.SUCCEEDED, result.text
    return result.text


async def test_list_is_one_level_sorted_with_dirs_suffixed_and_hidden_included(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §7 list: one level, sorted by name, `/` on dirs, hidden included, no gitignore."""
    (workspace / "b.txt").write_text("")
    (workspace / "a").mkdir()
    (workspace / "a" / "deep.txt").write_text("")
    (workspace / ".hidden").write_text("")
    (workspace / "ignored.log").write_text("")
    (workspace / ".gitignore").write_text("*.log\n")
    text = await run(toolset, "list", "{}")
    assert text == ".gitignore\n.hidden\na/\nb.txt\nignored.log"


async def test_list_pages_with_a_stable_offset_footer(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §7 list: `[showing N entries from offset O; more entries available at offset M]`."""
    for i in range(7):
        (workspace / f"f{i}").write_text("")
    first = await run(toolset, "list", '{"limit": 3}')
    assert (
        first
        == "f0\nf1\nf2\n\n[showing 3 entries from offset 0; more entries available at offset 3]"
    )
    second = await run(toolset, "list", '{"offset": 3, "limit": 3}')
    assert second.endswith("[showing 3 entries from offset 3; more entries available at offset 6]")
    assert await run(toolset, "list", '{"offset": 6, "limit": 3}') == "f6"


@pytest.mark.parametrize("limit", [0, 2001])
async def test_list_limit_outside_range_is_invalid(toolset: FinalizedToolset, limit: int) -> None:
    """tools.md §7 list: limit 1–2000 else invalid_arguments."""
    result = await toolset.call("list", f'{{"limit": {limit}}}', call_ctx())
    assert result.error is not None and result.error.code is ToolErrorCode.INVALID_ARGUMENTS


async def test_list_of_a_credential_dir_is_denied(toolset: FinalizedToolset, home: Path) -> None:
    """tools.md §10: credential dirs are unreadable for all file tools."""
    result = await toolset.call("list", f'{{"path": "{home / ".ssh"}"}}', call_ctx())
    assert result.status is ToolStatus.DENIED and result.sandbox_denied


async def test_glob_lists_files_newest_first_and_skips_hidden_and_ignored(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §7 glob: files only, newest mtime first, .gitignore + hidden skipped."""
    (workspace / "src" / "sub").mkdir(parents=True)
    for i, name in enumerate(
        [
            "src/old.py",
            "src/sub/new.py",
            "top.py",
            "build/gen.py",
            ".hidden/x.py",
            "src/.secret.py",
            "notes.txt",
        ]
    ):
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
    (workspace / ".gitignore").write_text("build/\n")
    (workspace / "link.py").symlink_to(workspace / "top.py")
    text = await run(toolset, "glob", '{"pattern": "**/*.py"}')
    assert text == "top.py\nsrc/sub/new.py\nsrc/old.py"
    assert await run(toolset, "glob", '{"pattern": "*.py", "path": "src/sub"}') == "src/sub/new.py"


async def test_glob_no_match_text(toolset: FinalizedToolset) -> None:
    """tools.md §7 glob: `No files match <pattern> in <path>`."""
    assert await run(toolset, "glob", '{"pattern": "*.rs"}') == "No files match *.rs in ."


async def test_glob_keeps_the_hundred_newest_and_spills_the_exact_total(
    toolset: FinalizedToolset, session: ToolSessionContext, workspace: Path
) -> None:
    """tools.md §7 glob, §10: at most 100 results, exact total, full list spilled."""
    for i in range(150):
        path = workspace / f"f{i:03}.txt"
        path.write_text("")
        os.utime(path, (2_000_000 + i, 2_000_000 + i))
    text = await run(toolset, "glob", '{"pattern": "*.txt"}')
    body, footer = text.split("\n\n")
    assert body.split("\n") == [f"f{i:03}.txt" for i in range(149, 49, -1)]
    assert session.spill_dir is not None
    spilled = session.spill_dir / "call_1.txt"
    assert footer == (
        f"[showing the 100 most recently modified of 150 files; full list saved to {spilled}]"
    )
    assert sorted(spilled.read_text().split()) == [f"f{i:03}.txt" for i in range(150)]


async def test_glob_under_the_cap_leaves_no_spill_file(
    toolset: FinalizedToolset, session: ToolSessionContext, workspace: Path
) -> None:
    """tools.md §8: no file left when nothing was omitted."""
    (workspace / "a.txt").write_text("")
    await run(toolset, "glob", '{"pattern": "*.txt"}')
    assert session.spill_dir is not None and not session.spill_dir.exists()


async def test_glob_timeout_says_at_least(
    toolset: FinalizedToolset, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tools.md §7 glob, §10: "at least" on timeout."""
    for i in range(3):
        (workspace / f"{i}.txt").write_text("")
    monkeypatch.setattr(walk, "SEARCH_TIMEOUT_S", 0.0)
    text = await run(toolset, "glob", '{"pattern": "*.txt"}')
    assert text == "[at least 0 files; search timed out after 0s — narrow the path or pattern]"


async def test_glob_cancel_returns_cancelled(toolset: FinalizedToolset, workspace: Path) -> None:
    """tools.md §7 grep/glob: cancel is checked per file -> `cancelled`."""
    (workspace / "a.txt").write_text("")
    ctx = call_ctx()
    ctx.cancel.set()
    result = await toolset.call("glob", '{"pattern": "*.txt"}', ctx)
    assert result.status is ToolStatus.CANCELLED
    assert result.error is not None and result.error.code is ToolErrorCode.CANCELLED


async def test_a_file_name_that_is_not_utf8_is_listed_by_glob_grep_and_list_and_spilled_as_its_bytes(
    toolset: FinalizedToolset, session: ToolSessionContext, workspace: Path
) -> None:
    """Every byte of the workspace is untrusted input (docs/reliability.md "NUL-safe storage"):
    a name Python decodes with ``surrogateescape`` (``bad\\udcff.txt``) made glob and grep fail
    as a whole (their full-list spill encoded it as UTF-8). Now each lists it — the storage rule
    escapes it later — and a spilled full list holds the name's own bytes."""
    name = os.fsdecode(b"bad\xff.txt")
    (workspace / name).write_bytes(b"needle\n")
    assert name in await run(toolset, "glob", '{"pattern": "*.txt"}')
    assert name in await run(toolset, "grep", '{"pattern": "needle"}')
    assert name in await run(toolset, "list", '{"path": "."}')
    for i in range(150):  # over glob's 100: the full list is spilled
        (workspace / f"f{i:03}.txt").write_text("")
    text = await run(toolset, "glob", '{"pattern": "*.txt"}')
    assert "full list saved to" in text
    assert session.spill_dir is not None
    assert b"bad\xff.txt\n" in (session.spill_dir / "call_1.txt").read_bytes()
