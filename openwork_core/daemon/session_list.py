"""``GET /v1/sessions``: the sessions with their activity (title, last activity, status)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from openwork_core.daemon.schemas import SessionBody, SessionList, SessionListItem
from openwork_core.storage.postgres.activity import SessionActivity
from openwork_core.storage.records import SessionRecord


def session_list(
    records: Sequence[SessionRecord],
    activity: Mapping[str, SessionActivity],
    body_of: Callable[[SessionRecord], SessionBody],
) -> SessionList:
    items = []
    for record in records:
        body = body_of(record).model_dump()
        seen = activity.get(record.id)
        if seen is not None:
            body |= {
                "title": seen.title,
                "last_activity_at": seen.last_activity_at,
                "status": "running" if seen.running else "idle",
            }
        items.append(SessionListItem(**body))
    return SessionList(sessions=items)
