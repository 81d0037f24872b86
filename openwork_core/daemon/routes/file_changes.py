"""POST /v1/sessions/{sid}/file-changes/{undo|reapply} (docs/daemon-additions.md, tools.md §8)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter

from openwork_core.daemon.schemas import AppliedChangeBody, AppliedChangesBody, FileChangesBody
from openwork_core.daemon.validation import SessionIdPath
from openwork_tools.undo import ChangeDirection

if TYPE_CHECKING:
    from openwork_core.service import OpenWorkCore


def file_changes_routes(router: APIRouter, core: OpenWorkCore) -> None:

    @router.post("/v1/sessions/{sid}/file-changes/{direction}", response_model=AppliedChangesBody)
    async def file_changes(
        sid: SessionIdPath, direction: ChangeDirection, body: FileChangesBody
    ) -> AppliedChangesBody:
        applied = await core.apply_file_changes(sid, body.change_ids, direction)
        return AppliedChangesBody(
            changes=[
                AppliedChangeBody(change_id=c.change_id, path=c.path, undone=c.undone)
                for c in applied
            ]
        )
