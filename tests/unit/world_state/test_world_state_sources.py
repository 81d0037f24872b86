"""The project context, AGENTS.md and sandbox policy sources (context-window.md §3,
permissions-sandbox.md §1, §3), with real files in tmp_path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openwork_core.context.world_state.errors import (
    ProjectInstructionError,
    UserProjectContextError,
)
from openwork_core.context.world_state.project_instructions import load_project_instructions
from openwork_core.context.world_state.sandbox_policy import (
    bash_may_write_workspace,
    render_sandbox_policy,
)
from openwork_core.context.world_state.user_project import (
    MAX_USER_PROJECT_CONTEXT_CHARS,
    load_user_project_context,
)
from openwork_tools.modes import SandboxMode, SandboxStatus
from openwork_tools.policy import NETWORK_GRANT_LINE

# ---- runtime/user-project-context ----


def test_the_project_context_lists_the_repository_root_sorted_with_directories_marked(
    tmp_path: Path,
) -> None:
    """§3: working directory, repository root (nearest `.git`), top-level entries sorted by name."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "README.md").write_text("x", encoding="utf-8")
    (tmp_path / "Makefile").write_text("x", encoding="utf-8")
    (tmp_path / "src" / "pkg" / "deep.py").write_text("x", encoding="utf-8")
    workspace = str(tmp_path / "src" / "pkg")
    assert load_user_project_context(workspace) == "\n".join(
        [
            '<user_project_context format_version="1">',
            f"working_directory: {workspace}",
            f"repository_root: {tmp_path}",
            f"top_level_entries of {tmp_path}:",
            "- .git/",
            "- Makefile",
            "- README.md",
            "- src/",
            "</user_project_context>",
        ]
    )


def test_without_a_git_entry_the_working_directory_is_listed(tmp_path: Path) -> None:
    """§3: the working directory when no `.git` is found (tmp dirs are outside any repository)."""
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    body = load_user_project_context(str(tmp_path))
    assert "repository_root: none\n" in body
    assert f"top_level_entries of {tmp_path}:\n- a.txt\n" in body


def test_a_git_file_marks_a_worktree_root(tmp_path: Path) -> None:
    """§3: `.git` may be a file (a worktree); it still marks the repository root."""
    (tmp_path / ".git").write_text("gitdir: elsewhere", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    assert f"repository_root: {tmp_path}\n" in load_user_project_context(str(tmp_path / "sub"))


def test_an_empty_root_is_listed_as_empty(tmp_path: Path) -> None:
    """§3: an empty listing is said explicitly."""
    assert load_user_project_context(str(tmp_path)).endswith(":\n(empty)\n</user_project_context>")


def test_at_most_64_entries_are_listed_and_the_rest_is_one_line_with_the_count(
    tmp_path: Path,
) -> None:
    """§3: at most 64 entries; the excess as one line with the omitted count."""
    for i in range(70):
        (tmp_path / f"f{i:02d}").write_text("", encoding="utf-8")
    lines = load_user_project_context(str(tmp_path)).splitlines()
    entries = [line for line in lines if line.startswith("- ")]
    assert entries == [f"- f{i:02d}" for i in range(64)]
    assert lines[-2:] == ["(6 more entries not listed)", "</user_project_context>"]


def test_exactly_64_entries_have_no_omitted_line(tmp_path: Path) -> None:
    """§3: the omitted line appears only when something is omitted."""
    for i in range(64):
        (tmp_path / f"f{i:02d}").mkdir()
    lines = load_user_project_context(str(tmp_path)).splitlines()
    assert lines[-2:] == ["- f63/", "</user_project_context>"]


def test_a_project_context_over_16384_characters_fails_sampling(tmp_path: Path) -> None:
    """§3: body over 16 384 characters -> `user_project_context_error`."""
    for i in range(64):
        (tmp_path / (f"{i:02d}" + "n" * 250)).write_text("", encoding="utf-8")
    with pytest.raises(UserProjectContextError) as err:
        load_user_project_context(str(tmp_path))
    assert err.value.code == "user_project_context_error"
    assert str(MAX_USER_PROJECT_CONTEXT_CHARS) in str(err.value)


def test_control_characters_and_undecodable_bytes_in_names_are_escaped(tmp_path: Path) -> None:
    """§3: each entry stays on one line of valid UTF-8."""
    (tmp_path / "evil\n- fake").write_text("", encoding="utf-8")
    os.close(os.open(os.path.join(os.fsencode(tmp_path), b"raw\xff"), os.O_CREAT | os.O_WRONLY))
    lines = load_user_project_context(str(tmp_path)).splitlines()
    assert "- evil\\x0a- fake" in lines and "- raw\\xff" in lines
    assert "- fake" not in lines


def test_a_working_directory_that_cannot_be_listed_fails_sampling(tmp_path: Path) -> None:
    """§3: sampling fails with `user_project_context_error`."""
    with pytest.raises(UserProjectContextError):
        load_user_project_context(str(tmp_path / "missing"))


# ---- project/AGENTS.md ----


def test_missing_file_produces_no_context(tmp_path: Path) -> None:
    """§3, §11 item 2: missing AGENTS.md -> section absent."""
    assert load_project_instructions(str(tmp_path)) is None


@pytest.mark.parametrize("text", ["", "\n", "  \n\t\n", "\u3000\n"])
def test_whitespace_only_file_produces_no_context(tmp_path: Path, text: str) -> None:
    """§3, §11 item 2: a blank AGENTS.md -> section absent, no empty message."""
    (tmp_path / "AGENTS.md").write_text(text, encoding="utf-8")
    assert load_project_instructions(str(tmp_path)) is None


def test_loads_a_stable_project_instruction_block(tmp_path: Path) -> None:
    """§3, §11 item 2: the exact text wrapped in `<project_instructions>`, identical each time."""
    text = "# Rules\n\n  Use tabs.\r\nNo trailing newline"
    (tmp_path / "AGENTS.md").write_bytes(text.encode())
    body = load_project_instructions(str(tmp_path))
    assert body == f"<project_instructions>\n{text}\n</project_instructions>"
    assert load_project_instructions(str(tmp_path)) == body


def test_only_the_working_directory_root_file_is_read(tmp_path: Path) -> None:
    """§3: only this one file; nested or parent AGENTS.md files are ignored."""
    (tmp_path / "AGENTS.md").write_text("parent", encoding="utf-8")
    (tmp_path / "ws" / "sub").mkdir(parents=True)
    (tmp_path / "ws" / "sub" / "AGENTS.md").write_text("nested", encoding="utf-8")
    assert load_project_instructions(str(tmp_path / "ws")) is None


def test_rejects_symlinked_instruction_files(tmp_path: Path) -> None:
    """§3, §11 item 3: a symlink fails with `project_instruction_error`."""
    (tmp_path / "real.md").write_text("rules", encoding="utf-8")
    (tmp_path / "AGENTS.md").symlink_to(tmp_path / "real.md")
    with pytest.raises(ProjectInstructionError, match="symlink") as err:
        load_project_instructions(str(tmp_path))
    assert err.value.code == "project_instruction_error"


def test_rejects_a_dangling_symlink_too(tmp_path: Path) -> None:
    """§3: a symlink is refused whether or not its target exists."""
    (tmp_path / "AGENTS.md").symlink_to(tmp_path / "nowhere.md")
    with pytest.raises(ProjectInstructionError, match="symlink"):
        load_project_instructions(str(tmp_path))


def test_rejects_instruction_paths_that_are_not_regular_files(tmp_path: Path) -> None:
    """§3: not a regular file (a directory, a FIFO that must not hang the read) fails."""
    (tmp_path / "dir" / "AGENTS.md").mkdir(parents=True)
    with pytest.raises(ProjectInstructionError, match="regular"):
        load_project_instructions(str(tmp_path / "dir"))
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / "AGENTS.md")
    with pytest.raises(ProjectInstructionError, match="regular"):
        load_project_instructions(str(tmp_path / "fifo"))


def test_rejects_oversized_and_non_utf8_files(tmp_path: Path) -> None:
    """§3, §11 item 3: over 64 KiB or not UTF-8 fails; exactly 64 KiB is accepted."""
    (tmp_path / "AGENTS.md").write_bytes(b"a" * (64 * 1024))
    assert load_project_instructions(str(tmp_path)) is not None
    (tmp_path / "AGENTS.md").write_bytes(b"a" * (64 * 1024 + 1))
    with pytest.raises(ProjectInstructionError, match="64 KiB"):
        load_project_instructions(str(tmp_path))
    (tmp_path / "AGENTS.md").write_bytes(b"caf\xe9")
    with pytest.raises(ProjectInstructionError, match="UTF-8"):
        load_project_instructions(str(tmp_path))


# ---- runtime/sandbox-policy ----


def test_the_sandbox_policy_is_the_four_spec_lines_then_the_network_line() -> None:
    """permissions-sandbox.md §3: auto with an available sandbox; issue 22 (docs/world-state.md):
    a fifth line, the one fixed network line the bash schema also carries."""
    body = render_sandbox_policy(SandboxMode.AUTO, SandboxStatus(available=True), "/w", True)
    assert body == (
        "<sandbox_policy>\n"
        "mode: auto\n"
        "workspace: /w\n"
        "write / edit: can change files in the workspace.\n"
        "bash: runs in the sandbox and can write the workspace and temporary directories.\n"
        "bash has no network (loopback only); a command that needs it sets "
        "sandboxPermissions.network to true, and the user is asked.\n"
        "</sandbox_policy>"
    )
    assert body.splitlines()[5] == NETWORK_GRANT_LINE


def test_with_the_network_setting_on_the_policy_says_bash_shares_it() -> None:
    """Issue 22 point 2: ``OPENWORK_SANDBOX_NETWORK=on`` changes only the network line."""
    on = render_sandbox_policy(
        SandboxMode.AUTO, SandboxStatus(available=True), "/w", True, network_on=True
    ).splitlines()
    off = render_sandbox_policy(
        SandboxMode.AUTO, SandboxStatus(available=True), "/w", True
    ).splitlines()
    assert on[5] == "bash shares the host's network."
    assert on[:5] == off[:5] and on[6:] == off[6:]


def test_accept_edits_keeps_bash_out_of_the_workspace() -> None:
    """permissions-sandbox.md §1, §3: `accept-edits` spelling and the read-only bash line."""
    lines = render_sandbox_policy(
        SandboxMode.ACCEPT_EDITS, SandboxStatus(available=True), "/w", False
    ).splitlines()
    assert lines[1] == "mode: accept-edits"
    assert lines[4] == (
        "bash: runs in the sandbox and can write temporary directories; "
        "writes to the workspace need sandboxPermissions."
    )


def test_an_unavailable_sandbox_says_bash_is_unavailable_naming_bubblewrap() -> None:
    """permissions-sandbox.md §2, §3; DESIGN.md §2: our backend is bubblewrap."""
    status = SandboxStatus(available=False, reason="bwrap not found")
    lines = render_sandbox_policy(SandboxMode.AUTO, status, "/w", True).splitlines()
    assert len(lines) == 6  # no network line: bash does not run at all
    assert lines[4] == (
        "bash: unavailable, because the bubblewrap sandbox failed its self-check. "
        "Use read / grep / glob / edit for file work, and tell the user which command you need "
        "them to run."
    )


@pytest.mark.parametrize(
    ("mode", "available", "workspace", "expected"),
    [
        (SandboxMode.AUTO, True, "/home/ada/proj", True),
        (SandboxMode.ACCEPT_EDITS, True, "/home/ada/proj", False),
        (SandboxMode.AUTO, False, "/home/ada/proj", False),
        (SandboxMode.AUTO, True, "/home/ada", False),
        (SandboxMode.AUTO, True, "/home", False),
        (SandboxMode.AUTO, True, "/", False),
        (SandboxMode.AUTO, True, "/home/adam", True),
    ],
)
def test_bash_may_write_the_workspace_only_in_auto_and_never_when_it_holds_home(
    mode: SandboxMode, available: bool, workspace: str, expected: bool
) -> None:
    """permissions-sandbox.md §1: the workspace equal to `$HOME` or an ancestor of it."""
    status = SandboxStatus(available=available)
    assert bash_may_write_workspace(mode, status, workspace, "/home/ada") is expected


def test_without_home_only_mode_and_availability_decide() -> None:
    """permissions-sandbox.md §1: with `HOME` unset there is no home rule."""
    assert bash_may_write_workspace(SandboxMode.AUTO, SandboxStatus(available=True), "/", None)
