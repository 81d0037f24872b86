"""SessionDirectory: what a session-level component (the sub-agent host) may ask of the registry
of live sessions, without a reference back to the service facade (multi-agent.md §1–§2).
``OpenWorkCore`` implements it."""

from __future__ import annotations

from typing import Protocol

from openwork_core.ids import SessionId
from openwork_core.session.handle import SessionHandle
from openwork_core.session.runner.context import ResolvedModel
from openwork_core.session.storage import SessionRecord


class SessionDirectory(Protocol):
    @property
    def closing(self) -> bool:
        """The daemon is shutting down: no session is loaded or started any more."""
        ...

    async def load(self, session_id: SessionId) -> SessionHandle:
        """The session's live handle, loading it from the database on first use."""
        ...

    def get(self, session_id: SessionId) -> SessionHandle | None:
        """The live handle when the session is loaded; never loads it."""
        ...

    async def close(self, session_id: SessionId) -> None:
        """Stop a loaded session's actor; unknown ids are ignored."""
        ...

    async def resolve_model(self, record: SessionRecord) -> ResolvedModel:
        """The session's provider, model, capabilities and port."""
        ...
