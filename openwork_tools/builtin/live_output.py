"""bash's live output (tools.md §4 progress): decoded text collected per stream in arrival order
and sent as progress at most every ``INTERVAL_S`` (and once at the end), each flush bounded to
``MAX_FLUSH_CHARS`` — when a burst is larger, its start is dropped with a marker and the latest
output is sent. Best effort like every progress: the final result is built from the output
buffer, never from here."""

from __future__ import annotations

import asyncio
from typing import Literal

from openwork_tools.context import StderrProgress, StdoutProgress, ToolCallContext

INTERVAL_S = 0.1
MAX_FLUSH_CHARS = 8 * 1024

StreamKind = Literal["stdout", "stderr"]


def omitted_marker(count: int) -> str:
    return f"[… {count} characters not shown live …]\n"


def bounded(
    segments: list[tuple[StreamKind, str]], limit: int = MAX_FLUSH_CHARS
) -> list[tuple[StreamKind, str]]:
    """Neighbouring segments of one stream joined; at most ``limit`` characters kept, the latest
    ones, the first kept segment prefixed with how much was dropped."""
    joined: list[tuple[StreamKind, str]] = []
    for kind, text in segments:
        if joined and joined[-1][0] == kind:
            joined[-1] = (kind, joined[-1][1] + text)
        elif text:
            joined.append((kind, text))
    total = sum(len(text) for _, text in joined)
    if total <= limit:
        return joined
    dropped = 0
    while joined and total - len(joined[0][1]) >= limit:
        total -= len(joined[0][1])
        dropped += len(joined[0][1])
        joined.pop(0)
    if total > limit:
        kind, text = joined[0]
        cut = total - limit
        joined[0] = (kind, text[cut:])
        dropped += cut
    kind, text = joined[0]
    joined[0] = (kind, omitted_marker(dropped) + text)
    return joined


class LiveOutput:
    def __init__(self, call: ToolCallContext) -> None:
        self._call = call
        self._pending: list[tuple[StreamKind, str]] = []

    def add(self, kind: StreamKind, text: str) -> None:
        if text:
            self._pending.append((kind, text))

    def flush(self) -> None:
        if not self._pending:
            return
        segments, self._pending = bounded(self._pending), []
        for kind, text in segments:
            self._call.send_progress(
                StdoutProgress(text) if kind == "stdout" else StderrProgress(text)
            )

    async def run(self) -> None:
        """Flush every ``INTERVAL_S`` until cancelled (its owner then calls ``flush`` once)."""
        while True:
            await asyncio.sleep(INTERVAL_S)
            self.flush()
