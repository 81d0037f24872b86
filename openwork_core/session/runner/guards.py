"""What every runner step shares: turning a failed write or a Chat State refusal
into the turn's failure (session-runtime.md §3: persistence_error, chat_state_error)."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

import structlog

from openwork_chat_state.errors import ChatStateError
from openwork_core.session.outcome import FailureCode, TurnFailure

log = structlog.get_logger(__name__)
T = TypeVar("T")


async def persisted(write: Awaitable[T], what: str) -> T:
    """Await a database write; any failure ends the turn with ``persistence_error``."""
    try:
        return await write
    except Exception as exc:
        log.error("turn.persist_failed", what=what, error=str(exc))
        # the database's text stays in the log: the turn's message reaches clients
        # (docs/reliability.md "One envelope everywhere")
        raise TurnFailure(FailureCode.PERSISTENCE_ERROR, f"could not persist {what}") from exc


async def in_chat_state(operation: Awaitable[T]) -> T:
    """Await a Chat State call; a refusal ends the turn with ``chat_state_error``."""
    try:
        return await operation
    except ChatStateError as exc:
        raise TurnFailure(FailureCode.CHAT_STATE_ERROR, f"{exc.code}: {exc}") from exc
