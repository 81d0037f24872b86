"""Writing a turn's end after a database outage (faults issue, point 1).

A turn whose writes failed ends ``failed`` / ``persistence_error`` in memory at once; when even
its terminal state could not be written, this repair keeps it and writes it as soon as the
database answers again — retried with capped exponential backoff in a task the actor owns, and
flushed before the session's next turn starts. The row is never left ``running`` by a live
daemon; if the daemon dies first, restart correction or a takeover interrupts it."""

from __future__ import annotations

import asyncio
import contextlib

import structlog

from openwork_core.ids import TurnId
from openwork_core.session.storage import RecordNotFound, SessionStorage, TurnClosing

log = structlog.get_logger(__name__)

FIRST_RETRY_S = 0.2
MAX_RETRY_S = 5.0
ATTEMPT_TIMEOUT_S = 10.0


def next_delay(previous: float) -> float:
    """Capped exponential backoff."""
    return min(MAX_RETRY_S, previous * 2) if previous else FIRST_RETRY_S


class TurnEndRepair:
    def __init__(self, storage: SessionStorage) -> None:
        self._storage = storage
        self._pending: tuple[TurnId, TurnClosing] | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopped = False

    @property
    def turn_id(self) -> TurnId | None:
        return None if self._pending is None else self._pending[0]

    def hold(self, turn_id: TurnId, closing: TurnClosing) -> None:
        """Keep ``closing`` and start writing it in the background."""
        self._pending = (turn_id, closing)
        if self._stopped:  # the actor is stopping: restart correction or a takeover settles it
            log.warning("turn.finish_unwritten_at_stop", turn_id=turn_id)
            return
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._retry(), name=f"turn-end-repair-{turn_id}"
            )

    async def _write_once(self) -> bool:
        pending = self._pending
        if pending is None:
            return True
        turn_id, closing = pending
        try:
            async with asyncio.timeout(ATTEMPT_TIMEOUT_S):
                await self._storage.finish_turn(turn_id, closing)
        except RecordNotFound:
            log.info("turn.finish_repair_moot", turn_id=turn_id)  # corrected by someone else
        except Exception as exc:
            log.warning("turn.finish_repair_failed", turn_id=turn_id, error=str(exc))
            return False
        else:
            log.info("turn.finish_repaired", turn_id=turn_id, status=closing.status.value)
        if self._pending is pending:
            self._pending = None
        return True

    async def _retry(self) -> None:
        delay = 0.0
        while not await self._write_once():
            delay = next_delay(delay)
            await asyncio.sleep(delay)

    async def flush(self) -> bool:
        """Write what is pending now (before a new turn); False while the database is away."""
        return await self._write_once()

    async def stop(self) -> None:
        self._stopped = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
