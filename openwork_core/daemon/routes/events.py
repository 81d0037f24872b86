"""SSE routes (daemon-api.md §4): a session's updates with replay, and every session's."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Header, Query
from sse_starlette.sse import EventSourceResponse
from starlette.responses import Response

from openwork_chat_state.error_root import InvalidRequest
from openwork_core.daemon.sse import global_events, session_events
from openwork_core.daemon.validation import INT64_MAX, SessionIdPath, last_event_cursor

if TYPE_CHECKING:
    from openwork_core.service import OpenWorkCore


class InvalidLastEventId(InvalidRequest):
    """400 ``invalid_request``: ``Last-Event-ID`` is not a decimal sequence within int64."""


def events_routes(router: APIRouter, core: OpenWorkCore, *, shutdown: asyncio.Event) -> None:

    @router.get("/v1/sessions/{sid}/events")
    async def events(
        sid: SessionIdPath,
        after_sequence: Annotated[int | None, Query(ge=0, le=INT64_MAX)] = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> Response:
        try:
            from_header = last_event_cursor(last_event_id)
        except ValueError as exc:
            raise InvalidLastEventId(str(exc)) from exc
        cursor = after_sequence if from_header is None else from_header
        await core.get_session(sid)
        replay, subscription = await core.subscribe(sid, cursor)
        return EventSourceResponse(
            session_events(sid, replay, subscription, shutdown), ping=15, send_timeout=30
        )

    @router.get("/v1/events")
    async def stream_all_events(
        after_sequence: Annotated[int | None, Query(ge=0, le=INT64_MAX)] = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> Response:
        """Every session's updates; ``id:`` is the broadcast's sequence, replayed after
        ``Last-Event-ID`` (or ``after_sequence``) from its ring buffer (issue 16 point 5)."""
        try:
            from_header = last_event_cursor(last_event_id)
        except ValueError as exc:
            raise InvalidLastEventId(str(exc)) from exc
        cursor = after_sequence if from_header is None else from_header
        replay, subscription = core.global_updates.subscribe_after(cursor)
        return EventSourceResponse(
            global_events(replay, subscription, shutdown), ping=15, send_timeout=30
        )
