"""The grep tool (tools.md §7 grep, §8 spill, §9, §10)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openwork_tools.builtin import walk
from openwork_tools.context import ToolSessionContext
from openwork_tools.registry import FinalizedToolset
from openwork_tools.results import ToolErrorCode, ToolStatus
from tests.support.tools import call_ctx


async def grep(toolset: FinalizedToolset, payload: str) -> str:
    result = await toolset.call("grep", payload, call_ctx())
    assert result.status is ToolStatus.SUCCEEDED, result.text
    return result.text


async def test_content_mode_groups_matches_per_file(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §7 grep: grouped per file, lines `{line}:{content}`, paths relative."""
    (workspace / "src").mkdir()
    (workspace / "src" / "a.py").write_text("import os\nx = 1\nimport re\n")
    (workspace / "b.py").write_text("import sys\n")
    text = await grep(toolset, '{"pattern": "^import"}')
    assert text == "b.py\n1:import sys\n\nsrc/a.py\n1:import os\n3:import re"


async def test_file_modes_and_glob_filter(toolset: FinalizedToolset, workspace: Path) -> None:
    """tools.md §7 grep: files_with_matches, count, and `glob` relative to `path`."""
    (workspace / "a.py").write_text("hit\nhit\n")
    (workspace / "b.txt").write_text("hit\n")
    assert await grep(toolset, '{"pattern": "hit", "outputMode": "files_with_matches"}') == (
        "a.py\nb.txt"
    )
    assert await grep(toolset, '{"pattern": "hit", "outputMode": "count"}') == "a.py:2\nb.txt:1"
    assert await grep(toolset, '{"pattern": "hit", "glob": "*.py", "outputMode": "count"}') == (
        "a.py:2"
    )


async def test_skips_gitignored_hidden_binary_and_symlinked_files(
    toolset: FinalizedToolset, workspace: Path, outside: Path
) -> None:
    """tools.md §7 grep: .gitignore honoured, hidden skipped, NUL = binary, no symlink following."""
    (workspace / ".gitignore").write_text("gen/\n*.log\n")
    (workspace / "gen").mkdir()
    (workspace / "gen" / "x.txt").write_text("needle\n")
    (workspace / "out.log").write_text("needle\n")
    (workspace / ".env").write_text("needle\n")
    (workspace / "bin.dat").write_bytes(b"needle\0\n")
    (outside / "far.txt").write_text("needle\n")
    (workspace / "far").symlink_to(outside)
    (workspace / "keep.txt").write_text("needle\n")
    assert await grep(toolset, '{"pattern": "needle"}') == "keep.txt\n1:needle"


async def test_no_match_text(toolset: FinalizedToolset, workspace: Path) -> None:
    """tools.md §7 grep: `No matches for /<pattern>/ in <path>`."""
    (workspace / "src").mkdir()
    assert await grep(toolset, '{"pattern": "zz+", "path": "src"}') == "No matches for /zz+/ in src"


async def test_caps_lines_per_file_and_total_and_spills_the_exact_totals(
    toolset: FinalizedToolset, session: ToolSessionContext, workspace: Path
) -> None:
    """tools.md §7 grep, §10: 50 per file, 250 total, keeps counting, full list spilled."""
    for i in range(8):
        (workspace / f"f{i}.txt").write_text("".join(f"match {n}\n" for n in range(60)))
    text = await grep(toolset, '{"pattern": "match"}')
    groups = text.split("\n\n")
    assert groups[0].split("\n")[-1] == "(+10 more matching lines in this file)"
    assert groups[0].count("\n") == 1 + 50
    shown = sum(1 for line in text.split("\n") if line.startswith(tuple("0123456789")))
    assert shown == 250
    assert session.spill_dir is not None
    spilled = session.spill_dir / "call_1.txt"
    assert groups[-1] == (
        f"[showing 250 of 480 matching lines in 8 files; full list saved to {spilled}]"
    )
    lines = spilled.read_text().splitlines()
    assert len(lines) == 480 and lines[0] == "f0.txt:1:match 0"


async def test_long_lines_are_cut_to_two_thousand_bytes(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §7 grep: 2,000 bytes per line with the truncation suffix."""
    (workspace / "w.txt").write_text("k" * 5000 + "\n")
    text = await grep(toolset, '{"pattern": "k"}')
    assert text == "w.txt\n1:" + "k" * 2000 + "... (line truncated to 2000 bytes)"


async def test_timeout_reports_at_least_the_counted_totals(
    toolset: FinalizedToolset, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tools.md §7 grep, §10: "at least" totals when the 30 s budget runs out."""
    (workspace / "a.txt").write_text("x\n")
    monkeypatch.setattr(walk, "SEARCH_TIMEOUT_S", 0.0)
    assert await grep(toolset, '{"pattern": "x"}') == (
        "[at least 0 matching lines in 0 files; search timed out after 0s — narrow the path or glob]"
    )


async def test_cancel_and_invalid_regex(toolset: FinalizedToolset, workspace: Path) -> None:
    """tools.md §7 grep: cancel -> cancelled; a bad pattern is invalid input; groups nested a
    thousand deep are a pattern like any other."""
    (workspace / "a.txt").write_text("x\n")
    ctx = call_ctx()
    ctx.cancel.set()
    result = await toolset.call("grep", '{"pattern": "x"}', ctx)
    assert result.status is ToolStatus.CANCELLED
    for pattern in ("(", "(?<=a)x", r"x\1"):  # look-around and back-references are not RE2's
        payload = json.dumps({"pattern": pattern})
        bad = await toolset.call("grep", payload, call_ctx())
        assert bad.error is not None and bad.error.code is ToolErrorCode.INVALID_ARGUMENTS
        assert bad.text.startswith("invalid tool input: pattern: not a valid regular expression")
    nested = json.dumps({"pattern": "(" * 1000 + "x" + ")" * 1000})  # re: RecursionError
    assert (await toolset.call("grep", nested, call_ctx())).text.startswith("a.txt")


async def test_grep_in_a_credential_dir_is_denied(toolset: FinalizedToolset, home: Path) -> None:
    """tools.md §10: credential dirs are unreadable for all file tools."""
    result = await toolset.call("grep", f'{{"pattern": "S", "path": "{home}/.ssh"}}', call_ctx())
    assert result.status is ToolStatus.DENIED and "SECRET" not in result.text


async def test_file_modes_list_at_most_250_files_and_spill_the_rest(
    toolset: FinalizedToolset, session: ToolSessionContext, workspace: Path
) -> None:
    """tools.md §7 grep: file modes list at most 250 files; exact total; full list spilled."""
    for i in range(260):
        (workspace / f"m{i:03}.txt").write_text("hit\n")
    text = await grep(toolset, '{"pattern": "hit", "outputMode": "files_with_matches"}')
    body, footer = text.split("\n\n")
    assert body.split("\n") == [f"m{i:03}.txt" for i in range(250)]
    assert session.spill_dir is not None
    spilled = session.spill_dir / "call_1.txt"
    assert footer == f"[showing 250 of 260 files with matches; full list saved to {spilled}]"
    assert len(spilled.read_text().splitlines()) == 260
