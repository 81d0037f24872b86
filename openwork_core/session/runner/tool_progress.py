"""A tool call's progress → ``tool_call_progress`` updates (tools.md §4; session-runtime.md §5
step 8): a try-send channel of ``CHANNEL_CAPACITY`` (a full channel drops the item, the result is
unaffected), forwarded by one task, drained before the call's ``tool_call_finished``."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import assert_never

from openwork_core.ids import ToolCallId
from openwork_core.session.updates import SessionUpdate, ToolCallProgress, ToolProgress
from openwork_tools.context import (
    MessageProgress,
    ProgressSink,
    StderrProgress,
    StdoutProgress,
    queue_sink,
)
from openwork_tools.context import ToolProgress as ToolOutput

CHANNEL_CAPACITY = 64


def progress_update(tool_call_id: ToolCallId, item: ToolOutput) -> ToolCallProgress:
    match item:
        case StdoutProgress(chunk=chunk) | StderrProgress(chunk=chunk):
            return ToolCallProgress(
                tool_call_id=tool_call_id, progress=ToolProgress(kind=item.kind, chunk=chunk)
            )
        case MessageProgress(message=message):
            return ToolCallProgress(
                tool_call_id=tool_call_id, progress=ToolProgress(kind="message", message=message)
            )
        case _:
            assert_never(item)


@contextlib.asynccontextmanager
async def forwarded_progress(
    tool_call_id: ToolCallId, emit: Callable[[SessionUpdate], None]
) -> AsyncIterator[ProgressSink]:
    """The sink for the call's ``ToolCallContext.progress``; on exit what is left is emitted."""
    channel: asyncio.Queue[ToolOutput] = asyncio.Queue(CHANNEL_CAPACITY)

    async def forward() -> None:
        while True:
            emit(progress_update(tool_call_id, await channel.get()))

    forwarder = asyncio.get_running_loop().create_task(forward(), name="tool-progress")
    try:
        yield queue_sink(channel)
    finally:
        forwarder.cancel()
        await asyncio.gather(forwarder, return_exceptions=True)
        while not channel.empty():
            emit(progress_update(tool_call_id, channel.get_nowait()))
