"""The read tool (tools.md §7 read, §7.4, §10)."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import pytest

from openwork_tools.builtin.read import read_page
from openwork_tools.builtin.walk import SearchStopped, StopCheck
from openwork_tools.context import ToolSessionContext
from openwork_tools.registry import FinalizedToolset
from openwork_tools.results import RESULT_TEXT_LIMIT, ToolErrorCode, ToolStatus
from tests.support.tools import call_ctx


async def read(toolset: FinalizedToolset, payload: str) -> tuple[ToolStatus, str]:
    result = await toolset.call("read", payload, call_ctx())
    return result.status, result.text


async def test_lines_are_numbered_with_a_tab_and_trailing_cr_removed(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §7 read: `{line number}\\t{content}`, trailing `\\r` removed, no footer at EOF."""
    (workspace / "a.txt").write_bytes(b"alpha\r\nbeta\n\ngamma")
    status, text = await read(toolset, '{"path": "a.txt"}')
    assert status is ToolStatus.SUCCEEDED
    assert text == "1\talpha\n2\tbeta\n3\t\n4\tgamma"


async def test_limit_footer_names_the_next_offset(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §7 read: `[showing lines 2-3 of 4. Continue with offset=4]`."""
    (workspace / "four.txt").write_text("one\ntwo\nthree\nfour\n")
    _, text = await read(toolset, '{"path": "four.txt", "offset": 2, "limit": 2}')
    assert text == "2\ttwo\n3\tthree\n\n[showing lines 2-3 of 4. Continue with offset=4]"


async def test_five_thousand_line_read_returns_the_first_page_with_continue_offset(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §10: a 5,000-line read returns the first page with `Continue with offset=N`."""
    (workspace / "big.txt").write_text("".join(f"l{i}\n" for i in range(1, 5001)))
    _, text = await read(toolset, '{"path": "big.txt"}')
    lines = text.split("\n")
    assert lines[0] == "1\tl1" and lines[1999] == "2000\tl2000"
    assert lines[-1] == "[showing lines 1-2000 of 5000. Continue with offset=2001]"


async def test_byte_cap_stops_at_a_whole_line_with_the_32_kb_footer(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §7 read: stops at 31,488 content bytes, only at a whole line."""
    (workspace / "wide.txt").write_text("".join(f"{'w' * 60}{i}\n" for i in range(3401)))
    _, text = await read(toolset, '{"path": "wide.txt"}')
    body, footer = text.rsplit("\n\n", 1)
    shown = body.split("\n")
    last = len(shown)
    assert len((body + "\n").encode()) <= RESULT_TEXT_LIMIT - 512
    assert shown[-1] == f"{last}\t{'w' * 60}{last - 1}"
    assert footer == (
        f"[showing lines 1-{last} of 3401; stopped at 32 KB. Continue with offset={last + 1}]"
    )


async def test_paging_is_stable_and_covers_the_file_exactly(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §10: stable paging — following the footers yields every line once, in order."""
    content = [f"row {i} " + "z" * (i % 97) for i in range(1, 4500)]
    (workspace / "rows.txt").write_text("\n".join(content) + "\n")
    seen: list[str] = []
    offset = 1
    while True:
        _, text = await read(toolset, f'{{"path": "rows.txt", "offset": {offset}}}')
        body, _, footer = text.partition("\n\n[showing")
        seen += [line.split("\t", 1)[1] for line in body.split("\n")]
        if not footer:
            break
        offset = int(footer.rsplit("offset=", 1)[1].rstrip("]"))
    assert seen == content


async def test_ten_thousand_char_line_is_cut_to_two_thousand(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §10: a 10,000-char line is cut to 2,000 chars with the truncation suffix."""
    (workspace / "long.txt").write_text("é" * 10_000 + "\nshort\n")
    _, text = await read(toolset, '{"path": "long.txt"}')
    first, second = text.split("\n")
    assert first == "1\t" + "é" * 2000 + "... (line truncated to 2000 chars)"
    assert second == "2\tshort"


async def test_empty_file_says_so(toolset: FinalizedToolset, workspace: Path) -> None:
    """tools.md §7 read: empty file -> `[empty file]`."""
    (workspace / "empty.txt").write_text("")
    assert await read(toolset, '{"path": "empty.txt"}') == (ToolStatus.SUCCEEDED, "[empty file]")


async def test_offset_zero_is_treated_as_one(toolset: FinalizedToolset, workspace: Path) -> None:
    """tools.md §7 read: offset 0 treated as 1."""
    (workspace / "a.txt").write_text("x\n")
    assert await read(toolset, '{"path": "a.txt", "offset": 0}') == (ToolStatus.SUCCEEDED, "1\tx")


@pytest.mark.parametrize("limit", [0, 2001, -1])
async def test_limit_outside_one_to_two_thousand_is_invalid(
    toolset: FinalizedToolset, workspace: Path, limit: int
) -> None:
    """tools.md §7 read: limit 1–2000 else invalid_arguments."""
    (workspace / "a.txt").write_text("x\n")
    result = await toolset.call("read", f'{{"path": "a.txt", "limit": {limit}}}', call_ctx())
    assert result.error is not None and result.error.code is ToolErrorCode.INVALID_ARGUMENTS
    assert result.text.startswith("invalid tool input: limit:")


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("nul.bin", b"abc\0def\n", "a.txt is a binary file"),
        ("latin1.txt", b"caf\xe9\n", "is not valid UTF-8 text"),
    ],
)
async def test_binary_and_non_utf8_files_are_errors_that_say_what_to_do(
    toolset: FinalizedToolset, workspace: Path, name: str, content: bytes, expected: str
) -> None:
    """tools.md §7 read: NUL bytes and invalid UTF-8 -> error text that says what to do next."""
    (workspace / name).write_bytes(content)
    status, text = await read(toolset, f'{{"path": "{name}"}}')
    assert status is ToolStatus.FAILED
    assert expected.split(" ", 1)[1] in text and name in text
    assert "Use " in text


async def test_directory_missing_file_and_offset_past_end_are_errors(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §7 read: directories, missing files, offset past the end -> guiding errors."""
    (workspace / "sub").mkdir()
    (workspace / "a.txt").write_text("1\n2\n")
    assert await read(toolset, '{"path": "sub"}') == (
        ToolStatus.FAILED,
        "sub is a directory; use list to see its entries.",
    )
    assert await read(toolset, '{"path": "nope.txt"}') == (
        ToolStatus.FAILED,
        "File not found: nope.txt. Check the path with list or glob.",
    )
    assert await read(toolset, '{"path": "a.txt", "offset": 3}') == (
        ToolStatus.FAILED,
        "offset 3 is past the end of a.txt (2 lines). Use an offset between 1 and 2.",
    )


async def test_partial_read_records_the_whole_file_hash(
    toolset: FinalizedToolset, session: ToolSessionContext, workspace: Path
) -> None:
    """tools.md §7.4: a successful read (any range) records the whole-file SHA-256."""
    data = "".join(f"{i}\n" for i in range(3000)).encode()
    (workspace / "h.txt").write_bytes(data)
    await read(toolset, '{"path": "h.txt", "offset": 10, "limit": 1}')
    real = (workspace / "h.txt").resolve()
    assert session.observations.get(real) == hashlib.sha256(data).hexdigest()


async def test_read_outside_the_workspace_is_allowed(
    toolset: FinalizedToolset, outside: Path
) -> None:
    """tools.md §6: reads are not limited to the workspace."""
    status, text = await read(toolset, f'{{"path": "{outside / "victim.txt"}"}}')
    assert (status, text) == (ToolStatus.SUCCEEDED, "1\tuntouched")


async def test_read_never_spills(
    toolset: FinalizedToolset, session: ToolSessionContext, workspace: Path
) -> None:
    """tools.md §8: read never spills; its own caps keep it under 32,000 bytes."""
    (workspace / "huge.txt").write_text(("q" * 1999 + "\n") * 500)
    result = await toolset.call("read", '{"path": "huge.txt"}', call_ctx())
    assert len(result.text.encode()) <= RESULT_TEXT_LIMIT
    assert session.spill_dir is not None and not session.spill_dir.exists()


@pytest.mark.parametrize(
    "path_of",
    [
        lambda home, ws: str(home / ".ssh" / "id_rsa"),
        lambda home, ws: "../.ssh/id_rsa",
        lambda home, ws: "link_to_key",
        lambda home, ws: "link_to_ssh/id_rsa",
    ],
    ids=["absolute", "dotdot", "symlink-file", "symlinked-parent"],
)
async def test_credential_dirs_are_unreadable_by_every_route(
    toolset: FinalizedToolset, home: Path, workspace: Path, path_of: object
) -> None:
    """tools.md §6, §10: reads into credential dirs are denied, symlinks included, with the
    credential marker that names bash's read grant (issue 22 point 4)."""
    (workspace / "link_to_key").symlink_to(home / ".ssh" / "id_rsa")
    (workspace / "link_to_ssh").symlink_to(home / ".ssh")
    given = path_of(home, workspace)  # type: ignore[operator]
    result = await toolset.call("read", f'{{"path": "{given}"}}', call_ctx())
    assert result.status is ToolStatus.DENIED and result.sandbox_denied
    assert result.error is not None and result.error.code is ToolErrorCode.PERMISSION_DENIED
    key = (home / ".ssh" / "id_rsa").resolve()
    assert result.text == (
        f"[sandbox: {key} holds credentials; reading it needs the user's approval]\n"
        f"[sandbox: to proceed, run bash once with sandboxPermissions listing {key} (read, exact)"
        " and a one-sentence justification; the user will be asked]"
    )
    assert "SECRET" not in result.text


async def test_a_cancelled_read_stops_at_its_next_chunk_not_at_the_end_of_the_file(
    toolset: FinalizedToolset, workspace: Path
) -> None:
    """tools.md §7 read streams the whole file (total lines, hash); a cancelled call's worker
    thread used to read on to the end — minutes for a file of many gigabytes, and the daemon's
    stop waited on it. The read checks the call's cancel per 1 MiB chunk."""
    big = workspace / "big.txt"
    big.write_bytes(b"0123456789abcde\n" * (1 << 20))  # 16 MiB
    checks: list[int] = []

    def cancelled_at_the_third_check() -> bool:
        checks.append(len(checks))
        return len(checks) >= 3

    stop = StopCheck(cancelled_at_the_third_check, math.inf)
    with pytest.raises(SearchStopped):
        read_page(big, "big.txt", 1, 10, stop)
    assert len(checks) == 3  # three chunks of sixteen
    ctx = call_ctx()
    ctx.cancel.set()
    result = await toolset.call("read", '{"path": "big.txt"}', ctx)
    assert result.status is ToolStatus.CANCELLED and result.text == "read was cancelled."
