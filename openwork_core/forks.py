"""Forking a session (issue 26 point 2): ``POST /v1/sessions/{sid}/fork`` makes a new root
session — same workspace, agent, provider, model and permission mode, titled "Fork of …" — whose
Conversation is the source's committed messages through a turn boundary
(``session/fork.py``). The source is only read and may be running. The fork's World State
follows the restart-replay rules: its first sample compares against what the copied history
carries, as a reload of the source would."""

from __future__ import annotations

from openwork_core.desktop.queries import DesktopQueries
from openwork_core.desktop.titles import clip
from openwork_core.ids import SessionId, new_session_id
from openwork_core.storage.postgres.fork import fork_session
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import SessionRecord

TITLE_MAX_CHARS = 200
"""``sessions.title``'s bound (migration 0007)."""


class SessionForks:
    def __init__(self, store: PostgresStore, desktop: DesktopQueries) -> None:
        self._store = store
        self._desktop = desktop

    async def fork(self, session_id: SessionId, after_sequence: int | None) -> SessionRecord:
        source = await self._desktop.session(session_id)  # 404 for an unknown session
        title = clip(f"Fork of {source.title or session_id}", TITLE_MAX_CHARS)
        return await fork_session(
            self._store.pool, session_id, new_session_id(), title, after_sequence
        )
