"""The per-session mailbox of agent messages (multi-agent.md §6, session-runtime.md §2, §4).

In memory only: it vanishes with the process, and reconciliation (§8) re-sends what was never
persisted. ``deliver`` never blocks and never creates a Turn; the runner ``drain``s before every
model call; ``wait_agent`` ``wait``s for any queued message. A message whose id is already queued
is dropped; an id that was drained earlier is accepted again (its write is then the
``ON CONFLICT (id) DO NOTHING`` that drops it), so a drained message whose write failed can still
come back through reconciliation.

All methods run on the event loop that owns the session; none is thread-safe.
"""

from __future__ import annotations

import asyncio

from openwork_core.agents.messages import AgentMessage
from openwork_core.ids import MessageId


class AgentMailbox:
    __slots__ = ("_nonempty", "_queue", "_queued_ids")

    def __init__(self) -> None:
        self._queue: list[AgentMessage] = []
        self._queued_ids: set[MessageId] = set()
        self._nonempty = asyncio.Event()

    def deliver(self, message: AgentMessage) -> bool:
        """Enqueue without blocking; ``False`` when a message with this id is already queued.
        The caller checks the envelope (``check_deliverable``) before delivering."""
        if message.id in self._queued_ids:
            return False
        self._queue.append(message)
        self._queued_ids.add(message.id)
        self._nonempty.set()
        return True

    def drain(self) -> tuple[AgentMessage, ...]:
        """Every queued message in arrival order; the mailbox is empty afterwards."""
        drained = tuple(self._queue)
        self._queue.clear()
        self._queued_ids.clear()
        self._nonempty.clear()
        return drained

    @property
    def pending(self) -> int:
        return len(self._queue)

    async def wait(self, timeout_s: float) -> bool:
        """``True`` as soon as a message is queued (at once if one already is), ``False`` after
        ``timeout_s`` without one. Cancelling the caller cancels the wait (``wait_agent`` §5)."""
        if self._queue:
            return True
        try:
            async with asyncio.timeout(timeout_s):
                await self._nonempty.wait()
        except TimeoutError:
            return bool(self._queue)
        return True
