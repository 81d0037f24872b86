"""Undo and reapply of ``file_change`` artifacts (tools.md §8).

Writes go through the file-tool fence with the session mode plus an exact write grant per file,
the file the change wrote (a path a symlink now leads elsewhere is a conflict);
undo requires the current hash to equal ``afterHash``, reapply ``beforeHash`` (a created file's
"before" is absence). Several changes to one path: undo in reverse order, reapply in order. A
partial failure rolls back what was applied; a failing rollback raises ``RollbackFailed``. The
observation table is bypassed. Core persists the returned artifacts (their ``undone`` flag).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import os
from collections.abc import Sequence
from pathlib import Path

from openwork_tools.builtin.mutation import (
    MutationFailed,
    atomic_replace,
    load_current,
    sha256,
)
from openwork_tools.context import ToolSessionContext
from openwork_tools.errors import ChangeConflict, ChangeDenied, ChangeStateMismatch, RollbackFailed
from openwork_tools.modes import SandboxMode
from openwork_tools.paths import CheckedPath, PathIntent, lexical_absolute, resolve_path
from openwork_tools.policy import Access, GrantScope, PathGrant, SandboxPolicy
from openwork_tools.results import FileChange


class ChangeDirection(enum.StrEnum):
    UNDO = "undo"
    REAPPLY = "reapply"


def _check(change: FileChange, session: ToolSessionContext, mode: SandboxMode) -> CheckedPath:
    """The file the change wrote, granted for writing: a change's path is the canonical one it
    had when the tool wrote it, so a path that leads elsewhere now (a symlink planted in its
    place or in a parent's) is another file, never written through."""
    written = lexical_absolute(change.path, session)
    if Path(os.path.realpath(written)) != written:
        raise ChangeConflict(
            f"{change.path} is no longer the file change {change.change_id} wrote (a symbolic "
            "link leads elsewhere now); nothing was overwritten"
        )
    policy = SandboxPolicy(mode, (PathGrant(written, Access.WRITE, GrantScope.EXACT),))
    checked = resolve_path(change.path, Access.WRITE, PathIntent.MAY_CREATE, policy, session)
    if not isinstance(checked, CheckedPath):
        raise ChangeDenied(checked.text)
    return checked


def _put(checked: CheckedPath, content: str | None, expected: str | None, verb: str) -> None:
    """Blocking: write ``content`` (None = delete) if the disk still has ``expected``."""
    if content is None:
        current = load_current(checked)
        if current.sha256 != expected:
            raise MutationFailed(f"file changed while {verb} was being prepared")
        checked.real.unlink()
        return
    checked.real.parent.mkdir(parents=True, exist_ok=True)
    atomic_replace(checked, content.encode(), expected, verb)


async def apply_file_changes(
    session: ToolSessionContext,
    changes: Sequence[FileChange],
    direction: ChangeDirection,
    mode: SandboxMode,
) -> tuple[FileChange, ...]:
    """Undo or reapply ``changes`` (given in creation order); returns them with ``undone`` set."""
    undo = direction is ChangeDirection.UNDO
    ordered = list(reversed(changes)) if undo else list(changes)
    for change in ordered:
        if change.undone == undo:
            state = "already undone" if undo else "not undone"
            raise ChangeStateMismatch(f"change {change.change_id} is {state}")
    targets = [await asyncio.to_thread(_check, c, session, mode) for c in ordered]
    async with contextlib.AsyncExitStack() as stack:
        for real in sorted({t.real for t in targets}):
            await stack.enter_async_context(session.write_locks.for_path(real))
        applied: list[tuple[CheckedPath, str | None, str | None]] = []
        for change, checked in zip(ordered, targets, strict=True):
            expected = change.after_hash if undo else change.before_hash
            content = change.before_content if undo else change.after_content
            try:
                current = await asyncio.to_thread(load_current, checked)
                if current.sha256 != expected:
                    raise ChangeConflict(
                        f"{change.path} no longer matches change {change.change_id} "
                        f"(it was modified afterwards); nothing was overwritten"
                    )
                await asyncio.to_thread(_put, checked, content, expected, direction.value)
            except (ChangeConflict, MutationFailed, OSError) as failed:
                await _roll_back(applied, direction)
                if isinstance(failed, ChangeConflict):
                    raise
                raise ChangeConflict(f"{change.path}: {failed}") from failed
            applied.append((checked, current.text, content))
    return tuple(dataclasses.replace(c, undone=undo) for c in changes)


async def _roll_back(
    applied: list[tuple[CheckedPath, str | None, str | None]], direction: ChangeDirection
) -> None:
    for checked, previous, written in reversed(applied):
        expected = None if written is None else sha256(written.encode())
        try:
            await asyncio.to_thread(_put, checked, previous, expected, f"{direction} rollback")
        except (MutationFailed, OSError) as failed:
            raise RollbackFailed(f"could not restore {checked.display}: {failed}") from failed
