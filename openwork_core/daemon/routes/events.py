"""``GET /v1/events`` (issue 16 point 5): all sessions' updates with ``id:`` = the broadcast's
sequence, replayed after ``Last-Event-ID`` (or ``?after_sequence=``) from its ring buffer."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Header, Query
from sse_starlette.sse import EventSourceResponse
from starlette.responses import Response

from openwork_core.daemon.sse import global_events
from openwork_core.service import OpenWorkCore


def events_router(core: OpenWorkCore, shutdown: asyncio.Event) -> APIRouter:
    router = APIRouter(tags=["events"])

    @router.get("/v1/events")
    async def stream_all_events(
        after_sequence: Annotated[int | None, Query(ge=0)] = None,
        last_event_id: Annotated[str | None, Header(max_length=40)] = None,
    ) -> Response:
        cursor = after_sequence
        if last_event_id is not None and last_event_id.strip().isdigit():
            cursor = int(last_event_id.strip())
        replay, subscription = core.global_updates.subscribe_after(cursor)
        return EventSourceResponse(
            global_events(replay, subscription, shutdown), ping=15, send_timeout=30
        )

    return router
