"""The one permission request a turn may be waiting on (session-runtime.md §2, §5). Shared by
the runner (which opens and awaits it) and the actor (which resolves it)."""

from __future__ import annotations

import asyncio

from openwork_core.ids import ToolCallId
from openwork_core.session.approval import PermissionDecision
from openwork_core.session.errors import PermissionNotPending


class PermissionSlot:
    def __init__(self) -> None:
        self._pending: tuple[str, asyncio.Future[PermissionDecision]] | None = None

    def open(self, tool_call_id: ToolCallId) -> asyncio.Future[PermissionDecision]:
        future: asyncio.Future[PermissionDecision] = asyncio.get_running_loop().create_future()
        self._pending = (tool_call_id, future)
        return future

    @property
    def pending(self) -> bool:
        """A card is waiting for the user's decision."""
        return self._pending is not None and not self._pending[1].done()

    def resolve(self, tool_call_id: ToolCallId, decision: PermissionDecision) -> None:
        pending = self._pending
        if pending is None or pending[0] != tool_call_id or pending[1].done():
            raise PermissionNotPending(tool_call_id)
        pending[1].set_result(decision)

    def close(self) -> None:
        self._pending = None
