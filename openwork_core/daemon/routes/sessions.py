"""Session routes (daemon-api.md §3): create, list, read, permission mode, messages, compaction,
rewind, transcript, context inspection."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Query
from starlette.responses import Response

from openwork_core.daemon.errors import JsonBytes
from openwork_core.daemon.schemas import (
    CompactionBody,
    CreateSessionBody,
    ForkSessionBody,
    MessagePageBody,
    PermissionModeBody,
    RewindBody,
    SessionBody,
)
from openwork_core.daemon.validation import CompactionIdQuery, Cursor, SessionIdPath
from openwork_core.daemon.views import compaction_body, message_json, session_body

if TYPE_CHECKING:
    from openwork_core.service import OpenWorkCore


def sessions_routes(router: APIRouter, core: OpenWorkCore) -> None:

    @router.post("/v1/sessions", status_code=201, response_model=SessionBody)
    async def create_session(body: CreateSessionBody) -> SessionBody:
        record = await core.create_session(
            workspace=body.workspace,
            agent=body.agent,
            provider=body.provider,
            model=body.model,
            permission_mode=body.permission_mode,
            provider_named="provider" in body.model_fields_set,
        )
        return session_body(record)

    # GET /v1/sessions and GET /v1/sessions/{sid}: daemon/routes/lifecycle.py (issue 16)

    @router.post("/v1/sessions/{sid}/fork", status_code=201, response_model=SessionBody)
    async def fork_session(sid: SessionIdPath, body: ForkSessionBody) -> SessionBody:
        """Issue 26 point 2: a new root session with the source's history through a turn."""
        return session_body(await core.forks.fork(sid, body.after_sequence))

    @router.put("/v1/sessions/{sid}/permission-mode", response_model=SessionBody)
    async def set_mode(sid: SessionIdPath, body: PermissionModeBody) -> SessionBody:
        return session_body(await core.set_permission_mode(sid, body.mode))

    @router.get("/v1/sessions/{sid}/messages", response_model=MessagePageBody)
    async def list_messages(
        sid: SessionIdPath,
        after_sequence: Cursor = 0,
        limit: Annotated[int, Query(ge=1, le=500)] = 100,
    ) -> Response:
        page = await core.list_messages(sid, after_sequence=after_sequence, limit=limit)
        body = {
            "messages": [message_json(m) for m in page.messages],
            "has_more": page.has_more,
            "next_after_sequence": page.next_after_sequence,
        }
        return JsonBytes(body)

    @router.post("/v1/sessions/{sid}/compact", response_model=CompactionBody)
    async def compact(sid: SessionIdPath) -> CompactionBody:
        return compaction_body(await core.compact(sid))

    @router.post("/v1/sessions/{sid}/rewind", response_model=CompactionBody)
    async def rewind(sid: SessionIdPath, body: RewindBody) -> CompactionBody:
        return compaction_body(await core.rewind(sid, body.compaction_id))

    @router.get("/v1/sessions/{sid}/transcript")
    async def transcript(
        sid: SessionIdPath,
        compaction_id: CompactionIdQuery | None = None,
        after_sequence: Cursor = 0,
        limit: Annotated[int, Query(ge=1, le=50)] = 20,
    ) -> Response:
        page = await core.read_transcript(
            sid, compaction_id=compaction_id, after_sequence=after_sequence, limit=limit
        )
        return JsonBytes(
            {
                "compaction_id": page.compaction_id,
                "through_message_sequence": page.through_message_sequence,
                "messages": [message_json(m) for m in page.messages],
                "has_more": page.has_more,
                "next_after_sequence": page.next_after_sequence,
            }
        )

    @router.get("/v1/sessions/{sid}/context")
    async def inspect_context(sid: SessionIdPath) -> Response:
        return JsonBytes((await core.inspect_context_window(sid)).to_json())
