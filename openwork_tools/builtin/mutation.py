"""What write and edit share: the fence, observations, size/UTF-8 checks, the atomic commit and
the ``file_change`` artifact (tools.md §6, §7 write/edit, §7.4, §8).

Blocking helpers run in a thread; the per-real-path write lock is held by the caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from openwork_tools.builtin.diff import diff_lines
from openwork_tools.context import ToolCallContext, ToolSessionContext
from openwork_tools.paths import CheckedPath, PathIntent, is_hard_protected, lexical_absolute
from openwork_tools.paths import protected_text as protected_denial
from openwork_tools.paths import resolve_path as fence
from openwork_tools.policy import Access, Actor
from openwork_tools.prepared import PreparedCall, SandboxPermissionsInput, normalise_escalation
from openwork_tools.regular_file import open_regular
from openwork_tools.results import FileChange, ToolErrorCode, ToolResult

MAX_FILE_BYTES = 1_048_576


class MutationFailed(Exception):
    """Carries the model-visible failure text of a write/edit."""


class ChangedDuringCommit(MutationFailed):
    pass


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class Current:
    """The target's disk state when the lock was taken: None = does not exist."""

    text: str | None
    sha256: str | None


def load_current(checked: CheckedPath) -> Current:
    """Blocking. An existing target must be a UTF-8 regular file of at most 1 MiB."""
    path, shown = checked.real, checked.display
    try:
        with open_regular(path) as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return Current(None, None)
    except IsADirectoryError as exc:
        raise MutationFailed(f"{shown} is a directory, not a file.") from exc
    except OSError as exc:
        raise MutationFailed(f"Cannot read {shown}: {exc.strerror or exc}") from exc
    if len(data) > MAX_FILE_BYTES:
        raise MutationFailed(
            f"{shown} is larger than 1 MiB; write and edit only change files up to 1 MiB."
        )
    if b"\0" in data:
        raise MutationFailed(f"{shown} is a binary file; write and edit only change UTF-8 text.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MutationFailed(
            f"{shown} is not valid UTF-8; write and edit only change UTF-8 text."
        ) from exc
    return Current(text, sha256(data))


def check_observed(session: ToolSessionContext, checked: CheckedPath, current: Current) -> None:
    """tools.md §7.4: an existing target must have been read, and be unchanged since."""
    if current.sha256 is None:
        return
    observed = session.observations.get(checked.real)
    if observed is None:
        raise MutationFailed(f"Read {checked.display} before editing it.")
    if observed != current.sha256:
        raise MutationFailed(
            f"{checked.display} changed since you last read it (by you via bash, or by the user). "
            "Read it again before editing."
        )


def ensure_parent(
    checked: CheckedPath, session: ToolSessionContext, call: ToolCallContext
) -> CheckedPath | ToolResult:
    """Blocking: create missing parents, then run the fence again on the now-existing parent."""
    try:
        checked.real.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MutationFailed(
            f"Cannot create the parent directory of {checked.display}: {exc.strerror or exc}"
        ) from exc
    again = fence(
        str(checked.real),
        Access.WRITE,
        PathIntent.MAY_CREATE,
        call.policy,
        session,
        can_escalate=True,
    )
    if isinstance(again, CheckedPath) and again.real != checked.real:
        raise MutationFailed(f"{checked.display} moved while it was being created; try again.")
    return again


def atomic_replace(
    checked: CheckedPath, data: bytes, expected_sha256: str | None, verb: str
) -> None:
    """Blocking: temp file in the checked parent + rename, re-comparing the disk just before."""
    path = checked.real
    fd, temp_name = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".openwork-tmp", dir=path.parent
    )
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(temp, path.stat().st_mode & 0o7777)
        if _disk_sha256(path) != expected_sha256:
            raise ChangedDuringCommit(f"file changed while {verb} was being prepared")
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _disk_sha256(path: Path) -> str | None:
    try:
        with open_regular(path) as fh:
            return sha256(fh.read())
    except FileNotFoundError:
        return None


async def resolve_target(
    given: str, session: ToolSessionContext, call: ToolCallContext
) -> CheckedPath | ToolResult:
    return await asyncio.to_thread(
        fence, given, Access.WRITE, PathIntent.MAY_CREATE, call.policy, session, can_escalate=True
    )


async def commit(
    session: ToolSessionContext,
    call: ToolCallContext,
    checked: CheckedPath,
    current: Current,
    after: str,
    verb: str,
) -> FileChange | ToolResult:
    """Write ``after`` (lock held), record the observation, and build the artifact."""
    data = after.encode()
    if len(data) > MAX_FILE_BYTES:
        raise MutationFailed(
            f"The new content of {checked.display} would be {len(data)} bytes; "
            "files are limited to 1 MiB (1048576 bytes)."
        )
    if current.sha256 is None:
        again = await asyncio.to_thread(ensure_parent, checked, session, call)
        if isinstance(again, ToolResult):
            return again
    try:
        await asyncio.to_thread(atomic_replace, checked, data, current.sha256, verb)
    except OSError as exc:
        raise MutationFailed(f"Cannot write {checked.display}: {exc.strerror or exc}") from exc
    after_hash = sha256(data)
    session.observations.record(checked.real, after_hash)
    diff = diff_lines(current.text or "", after)
    return FileChange(
        change_id=call.call_id,
        path=checked.given,
        kind="created" if current.text is None else "modified",
        additions=diff.additions,
        deletions=diff.deletions,
        hunks=diff.hunks,
        before_hash=current.sha256,
        after_hash=after_hash,
        before_content=current.text,
        after_content=after,
    )


def failure(message: str) -> ToolResult:
    return ToolResult.fail(ToolErrorCode.EXECUTION_FAILED, message)


def prepare_mutation(
    session: ToolSessionContext,
    given: str,
    permissions: SandboxPermissionsInput | None,
    justification: str | None,
) -> PreparedCall:
    """write/edit facts: the protected-target denial text and the normalised escalation."""
    lexical = lexical_absolute(given, session)
    real = Path(os.path.realpath(lexical))
    protected = is_hard_protected(real, session) or is_hard_protected(lexical, session)
    return PreparedCall(
        actor=Actor.FILE_TOOL,
        escalation=normalise_escalation(permissions, justification, session),
        protected_target=protected_denial(real) if protected else None,
    )
