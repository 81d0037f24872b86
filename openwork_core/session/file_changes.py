"""Undo / reapply of recorded file changes (tools.md §8): a user action, refused while a turn
runs; files first (with conflict checks and rollback), then the stored ``undone`` flags."""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from openwork_chat_state.error_root import NotFound
from openwork_core.ids import SessionId
from openwork_core.session.storage import FileChangeStorage
from openwork_tools.context import ToolSessionContext
from openwork_tools.modes import SandboxMode
from openwork_tools.results import FileChange
from openwork_tools.undo import ChangeDirection, apply_file_changes

log = structlog.get_logger(__name__)


class UnknownFileChange(NotFound, LookupError):
    """A change id this session never recorded (404 ``not_found``, docs/daemon-additions.md)."""


async def apply_recorded_changes(
    store: FileChangeStorage,
    session_id: SessionId,
    tool_session: ToolSessionContext,
    mode: SandboxMode,
    change_ids: Sequence[str],
    direction: ChangeDirection,
) -> tuple[FileChange, ...]:
    """Undo (in reverse order) or reapply (in order) the named changes of this session."""
    stored = await store.find(session_id, change_ids)
    found = {s.artifact.get("changeId") for s in stored}
    missing = [c for c in change_ids if c not in found]
    if missing:
        raise UnknownFileChange(f"unknown file change: {', '.join(missing)}")
    changes = [FileChange.from_json(s.artifact) for s in stored]
    applied = await apply_file_changes(tool_session, changes, direction, mode)
    await store.set_undone(session_id, {c.change_id: c.undone for c in applied})
    log.info("file_changes.applied", direction=direction, changes=len(applied))
    return applied
