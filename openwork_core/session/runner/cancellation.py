"""A turn's cancellation (session-runtime.md §2 CancelTurn, §4): the actor asks, the runner stops
at the next safe point.

Cancellable steps (the model stream, an approval wait, ``wait_agent``) run inside
``TurnCancellation.scope()``: a request made while the runner is in a scope cancels the runner's
task with ``Task.cancel`` — the step's own cleanup runs as the ``CancelledError`` unwinds it — and
the scope turns that cancellation into ``TurnCancelled`` (the way ``asyncio.timeout`` turns its
own cancellation into ``TimeoutError``). Outside a scope (a database commit, Chat State), a request
only marks the turn; the runner checks ``requested`` at its next step. Tools see ``token``, the
cancel token of the tool contract (tools.md §2)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from openwork_core.session.outcome import TurnCancelled


class TurnCancellation:
    def __init__(self) -> None:
        self.token = asyncio.Event()
        """Set once cancellation is requested; handed to tools as their cancel token."""
        self._scoped: asyncio.Task[object] | None = None
        self._cancelled_scope = False

    @property
    def requested(self) -> bool:
        return self.token.is_set()

    def request(self) -> None:
        """Ask the turn to stop; idempotent. Cancels the runner's task only inside a scope."""
        if self.token.is_set():
            return
        self.token.set()
        if self._scoped is not None and not self._cancelled_scope:
            self._cancelled_scope = True
            self._scoped.cancel()

    def check(self) -> None:
        """Raise ``TurnCancelled`` when cancellation was requested (between steps)."""
        if self.token.is_set():
            raise TurnCancelled()

    @asynccontextmanager
    async def scope(self) -> AsyncIterator[None]:
        """Run a cancellable step; a request inside it ends it with ``TurnCancelled``. Any other
        cancellation of the task (shutdown) propagates unchanged."""
        self.check()
        task = asyncio.current_task()
        if task is None or self._scoped is not None:
            raise RuntimeError("a cancellation scope runs in a task, one at a time")
        self._scoped = task
        try:
            yield
        except asyncio.CancelledError:
            if self._cancelled_scope and task.uncancel() == 0:
                raise TurnCancelled() from None
            raise
        finally:
            self._scoped = None
        if self._cancelled_scope:
            # the step swallowed our cancellation; still honour the request
            task.uncancel()
            raise TurnCancelled()
