"""Per-session activity for listings (``openwork sessions``): a title (the start of the first
user message), the last activity (the latest turn or the session row), and whether a turn runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from openwork_core.storage.postgres.connection import Conn

TITLE_CHARS = 80


@dataclass(frozen=True, slots=True)
class SessionActivity:
    title: str | None
    last_activity_at: datetime
    running: bool


def title_of(text: str | None) -> str | None:
    """The first line of the first user message, at most ``TITLE_CHARS`` characters."""
    if text is None:
        return None
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    if not line:
        return None
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"


async def session_activity(conn: Conn, session_ids: Sequence[str]) -> dict[str, SessionActivity]:
    rows = await conn.fetch(
        """SELECT s.id,
                  (SELECT m.content -> 0 ->> 'text' FROM messages m
                    WHERE m.session_id = s.id AND m.role = 'user' AND m.message_kind = 'normal'
                      AND m.content -> 0 ->> 'type' = 'text'
                    ORDER BY m.sequence LIMIT 1) AS first_text,
                  GREATEST(s.updated_at,
                           (SELECT max(t.updated_at) FROM turns t WHERE t.session_id = s.id))
                      AS last_activity_at,
                  EXISTS (SELECT 1 FROM turns t
                           WHERE t.session_id = s.id AND t.status = 'running') AS running
             FROM sessions s WHERE s.id = ANY($1::text[])""",
        list(session_ids),
    )
    return {
        str(r["id"]): SessionActivity(
            title=title_of(r["first_text"]),
            last_activity_at=r["last_activity_at"],
            running=bool(r["running"]),
        )
        for r in rows
    }
