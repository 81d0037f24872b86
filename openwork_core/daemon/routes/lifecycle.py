"""Session lifecycle (issue 16 point 1): the list with titles, status and filters, one session
without loading its actor, ``PATCH`` (title, archived) and ``DELETE``."""

from __future__ import annotations

import asyncio
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import orjson
from fastapi import APIRouter, Query
from pydantic import AfterValidator
from starlette.responses import Response

from openwork_core.daemon.desktop_schemas import PatchSessionBody, SessionSummaryWithSnapshot
from openwork_core.daemon.errors import JsonBytes
from openwork_core.daemon.validation import SessionIdPath, StorableStr
from openwork_core.desktop.cursor import parse_session_cursor
from openwork_core.desktop.views import SessionPage, SessionSummary
from openwork_core.model_switch import ModelChoice
from openwork_core.session.wire import wire_json
from openwork_core.storage.desktop_records import SessionFilter, SessionKey, SessionPatch

if TYPE_CHECKING:
    from openwork_core.service import OpenWorkCore


def _cursor(value: str | None) -> SessionKey | None:
    return None if value is None else parse_session_cursor(value)


async def _workspace_key(workspace: str | None) -> str | None:
    """Sessions store the resolved workspace; an absolute path is resolved the same way."""
    if workspace is None or not workspace.startswith("/"):
        return workspace
    return str(await asyncio.to_thread(Path(workspace).resolve))


TAGS: list[str | Enum] = ["sessions"]
"""The OpenAPI tag of these routes."""


def lifecycle_routes(router: APIRouter, core: OpenWorkCore) -> None:

    @router.get("/v1/sessions", response_model=SessionPage, tags=TAGS)
    async def list_sessions(
        workspace: Annotated[StorableStr | None, Query(min_length=1, max_length=4096)] = None,
        archived: bool | None = None,
        cursor: Annotated[str | None, Query(max_length=400), AfterValidator(_cursor_check)] = None,
        limit: Annotated[
            int | None,
            Query(ge=1, le=200, description="page size; absent: every session, as before"),
        ] = None,
    ) -> SessionPage:
        page = await core.desktop.list_sessions(
            SessionFilter(
                workspace=await _workspace_key(workspace),
                archived=archived,
                after=_cursor(cursor),
                limit=limit,
            )
        )
        return page

    @router.get("/v1/sessions/{sid}", response_model=SessionSummaryWithSnapshot, tags=TAGS)
    async def get_session(sid: SessionIdPath) -> Response:
        summary = await core.desktop.session(sid)
        snapshot = await core.snapshot(sid)  # never loads the actor
        body = summary.model_dump(mode="json")
        body["snapshot"] = orjson.loads(wire_json(snapshot))
        return JsonBytes(body)

    @router.patch("/v1/sessions/{sid}", response_model=SessionSummary, tags=TAGS)
    async def update_session(sid: SessionIdPath, body: PatchSessionBody) -> SessionSummary:
        given = body.model_fields_set
        choice = ModelChoice(
            provider=body.provider,
            model=body.model,
            provider_given="provider" in given,
            model_given="model" in given,
        )
        if not choice.empty:  # validated and stored first: a refusal changes nothing
            await core.model_switch.switch(sid, choice)
        patch = SessionPatch(
            title=body.title,
            clear_title="title" in given and body.title is None,
            archived=body.archived,
        )
        return await core.desktop.update_session(sid, patch)

    @router.delete("/v1/sessions/{sid}", status_code=204, response_class=Response, tags=TAGS)
    async def delete_session(sid: SessionIdPath) -> Response:
        await core.desktop.delete_session(sid)
        return Response(status_code=204)


def _cursor_check(value: str | None) -> str | None:
    """Reject a cursor this daemon did not issue as a 422 field error."""
    _cursor(value)
    return value
