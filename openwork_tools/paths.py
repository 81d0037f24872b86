"""The path fence of the file tools (tools.md §6, permissions-sandbox.md §1, §5, §6).

``resolve_path`` does blocking ``stat``/``realpath`` calls; async tools run it in a thread.
"""

from __future__ import annotations

import contextlib
import enum
import os
from dataclasses import dataclass
from pathlib import Path

from openwork_tools.context import ToolSessionContext
from openwork_tools.policy import Access, SandboxPolicy
from openwork_tools.results import ToolErrorCode, ToolResult
from openwork_tools.sandbox.gitdir import GIT


class PathIntent(enum.StrEnum):
    MUST_EXIST = "must_exist"
    MAY_CREATE = "may_create"


@dataclass(frozen=True, slots=True)
class CheckedPath:
    """A real path that passed the fence for one access; ``display`` is what results show."""

    real: Path
    display: str
    given: str
    exists: bool


def protected_text(path: Path | str) -> str:
    return f"[sandbox: {path} is protected and cannot be written in any mode; do not retry]"


def denial_text(access: Access, path: Path | str, mode_display: str, *, can_escalate: bool) -> str:
    """The model-visible marker of a path denied by mode (permissions-sandbox.md §6)."""
    first = f"[sandbox: {access.value} access to {path} denied under {mode_display} mode]"
    if not can_escalate:
        return first
    return (
        f"{first}\n[sandbox: to proceed, retry this call once with sandboxPermissions listing "
        f"{path} ({access.value}, exact), and a one-sentence justification; "
        "the user will be asked]"
    )


def is_under(path: Path, root: Path) -> bool:
    """``path`` is ``root`` or lies below it (lexically, on already-resolved paths)."""
    return path == root or root in path.parents


def is_hard_protected(real: Path, session: ToolSessionContext) -> bool:
    """Never written by a file tool: the openwork home and skill root (but this session's temp
    dir), every ``.git`` in the workspace (a directory or a pointer file, at any depth) with what
    is below it, and the git directories a ``.git`` file of the workspace names (issue 22)."""
    if any(is_under(real, temp) for temp in session.temp_dirs):
        return False
    if any(is_under(real, root) for root in (*session.protected_roots, *session.git_dirs)):
        return True
    ws = session.working_directory
    return is_under(real, ws) and GIT in real.relative_to(ws).parts


def secret_text(path: Path | str) -> str:
    return (
        f"[sandbox: {path} belongs to the OpenWork daemon and cannot be read or written by any "
        "tool in any mode; do not retry]"
    )


def is_secret(path: Path, session: ToolSessionContext) -> bool:
    """Under the daemon's own directory and not in this session's spill dir (never grantable)."""
    if session.spill_dir is not None and is_under(path, session.spill_dir):
        return False
    return any(is_under(path, root) for root in session.secret_dirs)


def is_credential(path: Path, session: ToolSessionContext) -> bool:
    return any(is_under(path, root) for root in session.credential_paths)


def credential_text(path: Path | str, *, can_escalate: bool) -> str:
    """The marker of a read refused in the credential tier (issue 22 point 4; docs/tools.md)."""
    first = f"[sandbox: {path} holds credentials; reading it needs the user's approval]"
    if not can_escalate:
        return first
    return (
        f"{first}\n[sandbox: to proceed, run bash once with sandboxPermissions listing {path} "
        "(read, exact) and a one-sentence justification; the user will be asked]"
    )


def write_allowed(real: Path, session: ToolSessionContext, policy: SandboxPolicy) -> bool:
    """File tools write the workspace in both modes, temp dirs, and this call's write grants."""
    if policy.granted(real, Access.WRITE):
        return True
    if is_credential(real, session):
        return False
    return is_under(real, session.working_directory) or any(
        is_under(real, t) for t in session.temp_dirs
    )


def lexical_absolute(given: str, session: ToolSessionContext) -> Path:
    """Relative paths join the workspace; ``.``/``..`` are removed lexically."""
    joined = os.path.join(session.working_directory, given)
    return Path(os.path.normpath(joined))


class _Dangling(Exception):
    pass


def _canonical_may_create(path: Path) -> tuple[Path, bool]:
    probe = str(path)
    tail: list[str] = []
    while not os.path.exists(probe):
        if os.path.islink(probe):
            raise _Dangling(probe)
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        tail.append(os.path.basename(probe))
        probe = parent
    real = Path(os.path.realpath(probe)).joinpath(*reversed(tail))
    return real, not tail


def resolve_path(
    given: str,
    access: Access,
    intent: PathIntent,
    policy: SandboxPolicy,
    session: ToolSessionContext,
    *,
    can_escalate: bool = False,
) -> CheckedPath | ToolResult:
    """Canonicalise ``given`` and check it, or return the denial/failure result to send back."""
    lexical = lexical_absolute(given, session)
    mode = policy.mode.display
    escalate = can_escalate and session.sandbox.available
    strict: Path | None = None
    if intent is PathIntent.MUST_EXIST:  # an existing path's canonical form, resolved once
        with contextlib.suppress(OSError):
            strict = Path(os.path.realpath(lexical, strict=True))
    canonical = strict if strict is not None else Path(os.path.realpath(lexical))
    if is_secret(lexical, session) or is_secret(canonical, session):
        return ToolResult.denied(secret_text(lexical), sandbox_denied=False)
    if intent is PathIntent.MUST_EXIST:
        if strict is not None:
            real = strict
        else:
            if is_credential(lexical, session) and not policy.granted(lexical, access):
                return ToolResult.denied(
                    credential_text(lexical, can_escalate=session.sandbox.available),
                    sandbox_denied=True,
                )
            return ToolResult.fail(
                ToolErrorCode.EXECUTION_FAILED,
                f"File not found: {given}. Check the path with list or glob.",
            )
        exists = True
    else:
        try:
            real, exists = _canonical_may_create(lexical)
        except _Dangling as dangling:
            return ToolResult.denied(
                f"[sandbox: {dangling.args[0]} is a symbolic link whose target does not exist; "
                "refusing to create a file through it]",
                sandbox_denied=False,
            )
    if access is Access.WRITE:
        if is_hard_protected(real, session) or is_hard_protected(lexical, session):
            return ToolResult.denied(protected_text(real), sandbox_denied=False)
        if not write_allowed(real, session, policy):
            return ToolResult.denied(
                denial_text(access, real, mode, can_escalate=escalate), sandbox_denied=True
            )
    elif (is_credential(real, session) or is_credential(lexical, session)) and not policy.granted(
        real, Access.READ
    ):
        return ToolResult.denied(
            credential_text(real, can_escalate=session.sandbox.available), sandbox_denied=True
        )
    return CheckedPath(real=real, display=session.display_path(real), given=given, exists=exists)
