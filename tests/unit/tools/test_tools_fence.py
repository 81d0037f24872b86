"""The path fence `resolve_path` (tools.md §6, permissions-sandbox.md §1, §5, §6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from openwork_tools.context import ToolSessionContext
from openwork_tools.modes import SandboxMode
from openwork_tools.paths import CheckedPath, PathIntent, resolve_path
from openwork_tools.policy import Access, GrantScope, PathGrant, SandboxPolicy
from openwork_tools.results import ToolResult, ToolStatus

AUTO = SandboxPolicy(SandboxMode.AUTO)


def check_write(
    given: str,
    session: ToolSessionContext,
    policy: SandboxPolicy = AUTO,
    *,
    can_escalate: bool = True,
) -> CheckedPath | ToolResult:
    return resolve_path(
        given, Access.WRITE, PathIntent.MAY_CREATE, policy, session, can_escalate=can_escalate
    )


def test_relative_paths_join_the_workspace_and_dots_are_removed_lexically(
    session: ToolSessionContext, workspace: Path
) -> None:
    """tools.md §6: relative -> joined to working dir; `.`/`..` removed lexically."""
    checked = check_write("./src/../src/new.txt", session)
    assert isinstance(checked, CheckedPath)
    assert checked.real == workspace.resolve() / "src" / "new.txt"
    assert checked.display == "src/new.txt" and not checked.exists


def test_must_exist_reports_a_missing_file(session: ToolSessionContext) -> None:
    """tools.md §6: MustExist canonicalises the target; missing -> error."""
    result = resolve_path("gone.txt", Access.READ, PathIntent.MUST_EXIST, AUTO, session)
    assert isinstance(result, ToolResult) and result.status is ToolStatus.FAILED


@pytest.mark.parametrize("mode", list(SandboxMode))
def test_write_outside_the_workspace_is_denied_with_the_mode_marker(
    session: ToolSessionContext, outside: Path, mode: SandboxMode
) -> None:
    """permissions-sandbox.md §6: the file-tool denial marker names access, path and mode."""
    target = (outside / "victim.txt").resolve()
    result = check_write(str(target), session, SandboxPolicy(mode))
    assert isinstance(result, ToolResult)
    assert result.status is ToolStatus.DENIED and result.sandbox_denied
    assert result.text == (
        f"[sandbox: write access to {target} denied under {mode.display} mode]\n"
        f"[sandbox: to proceed, retry this call once with sandboxPermissions listing {target} "
        "(write, exact), and a one-sentence justification; the user will be asked]"
    )


def test_denial_has_no_escalation_hint_when_the_sandbox_is_unavailable(
    make_session: object, outside: Path
) -> None:
    """permissions-sandbox.md §4: with the sandbox unavailable there is no sandboxPermissions."""
    from tests.support.tools import UNAVAILABLE

    session = make_session(sandbox=UNAVAILABLE)  # type: ignore[operator]
    target = (outside / "victim.txt").resolve()
    result = check_write(str(target), session)
    assert isinstance(result, ToolResult)
    assert result.text == f"[sandbox: write access to {target} denied under auto mode]"


@pytest.mark.parametrize(
    "given",
    [
        lambda home, ws: str(home / ".openwork" / "config.toml"),
        lambda home, ws: str(home / ".openwork" / "spill" / "s1" / "call_1.txt"),
        lambda home, ws: ".git/hooks/pre-commit",
        lambda home, ws: "vendor/lib/.git/hooks/post-checkout",
    ],
    ids=["openwork-home", "spill", "git-hooks", "nested-git-hooks"],
)
def test_hard_protected_paths_are_never_writable_even_with_a_grant(
    session: ToolSessionContext, home: Path, workspace: Path, given: object
) -> None:
    """permissions-sandbox.md §5 step 1: the protected text, in every mode, grants included."""
    path = given(home, workspace)  # type: ignore[operator]
    grant = PathGrant(Path("/"), Access.WRITE, GrantScope.SUBTREE)
    for policy in (AUTO, SandboxPolicy(SandboxMode.ACCEPT_EDITS, (grant,))):
        result = check_write(path, session, policy)
        assert isinstance(result, ToolResult) and result.status is ToolStatus.DENIED
        assert not result.sandbox_denied
        assert result.text.startswith("[sandbox: ")
        assert result.text.endswith(
            " is protected and cannot be written in any mode; do not retry]"
        )


def test_a_write_grant_widens_only_that_call(session: ToolSessionContext, outside: Path) -> None:
    """tools.md §10: escalation widens only the call whose policy carries the grant."""
    target = (outside / "victim.txt").resolve()
    granted = SandboxPolicy(SandboxMode.AUTO, (PathGrant(target, Access.WRITE, GrantScope.EXACT),))
    assert isinstance(check_write(str(target), session, granted), CheckedPath)
    assert isinstance(check_write(str(target), session, AUTO), ToolResult)
    sibling = str(outside / "other.txt")
    assert isinstance(check_write(sibling, session, granted), ToolResult)
    subtree = SandboxPolicy(
        SandboxMode.AUTO, (PathGrant(outside.resolve(), Access.WRITE, GrantScope.SUBTREE),)
    )
    assert isinstance(check_write(sibling, session, subtree), CheckedPath)
    read_only = SandboxPolicy(
        SandboxMode.AUTO, (PathGrant(outside.resolve(), Access.READ, GrantScope.SUBTREE),)
    )
    assert isinstance(check_write(sibling, session, read_only), ToolResult)


def test_temp_dirs_are_writable(session: ToolSessionContext) -> None:
    """permissions-sandbox.md §1: temp dirs are writable in both modes."""
    target = session.temp_dirs[0] / "scratch.txt"
    for mode in SandboxMode:
        assert isinstance(check_write(str(target), session, SandboxPolicy(mode)), CheckedPath)


def test_dangling_symlink_on_the_way_is_rejected_for_creation(
    session: ToolSessionContext, workspace: Path, outside: Path
) -> None:
    """tools.md §6: MayCreate — a dangling symlink on the way is rejected."""
    (workspace / "dangling").symlink_to(outside / "not-yet")
    for given in ("dangling", "dangling/child.txt"):
        result = check_write(given, session)
        assert isinstance(result, ToolResult) and result.status is ToolStatus.DENIED
        assert "symbolic link whose target does not exist" in result.text
    assert not (outside / "not-yet").exists()


def test_symlinks_are_checked_by_their_real_target(
    session: ToolSessionContext, workspace: Path, outside: Path
) -> None:
    """tools.md §6, §10: a symlink (file or parent) to outside is judged by its real path."""
    (workspace / "link.txt").symlink_to(outside / "victim.txt")
    (workspace / "linkdir").symlink_to(outside)
    for given in ("link.txt", "linkdir/new.txt", "linkdir/victim.txt"):
        result = check_write(given, session)
        assert isinstance(result, ToolResult) and result.sandbox_denied, given
    inside = workspace / "real"
    inside.mkdir()
    (workspace / "alias").symlink_to(inside)
    ok = check_write("alias/x.txt", session)
    assert isinstance(ok, CheckedPath) and ok.display == "real/x.txt"


def test_reading_a_granted_credential_path_is_allowed(
    session: ToolSessionContext, home: Path
) -> None:
    """permissions-sandbox.md §5: an approved read grant widens that call only."""
    key = (home / ".ssh" / "id_rsa").resolve()
    policy = SandboxPolicy(SandboxMode.AUTO, (PathGrant(key, Access.READ, GrantScope.EXACT),))
    assert isinstance(
        resolve_path(str(key), Access.READ, PathIntent.MUST_EXIST, policy, session), CheckedPath
    )
    assert isinstance(
        resolve_path(str(key), Access.READ, PathIntent.MUST_EXIST, AUTO, session), ToolResult
    )
