"""A session's provider and model (issue 26 point 4): ``PATCH /v1/sessions/{sid}`` switches
them; a running turn takes them at its next model call, an idle session at its next turn."""

from __future__ import annotations

from openwork_core.ids import SessionId
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.postgres.connection import Conn


async def set_session_model(
    conn: Conn, session_id: SessionId, provider_id: str, model_name: str | None
) -> None:
    result = await conn.execute(
        """UPDATE sessions SET provider_id = $2, model_name = $3, updated_at = now()
           WHERE id = $1""",
        session_id,
        provider_id,
        model_name,
    )
    if result != "UPDATE 1":
        raise RecordNotFound(f"unknown session: {session_id}")
