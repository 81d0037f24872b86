"""bash output bounded in memory and on disk: head 2 KiB + tail 14 KiB, the rest streamed to
the spill file (tools.md §7 bash, §8)."""

from __future__ import annotations

import asyncio

from openwork_tools.spill import SpillFile, omission_note

HEAD_BYTES = 2 * 1024
TAIL_BYTES = 14 * 1024


class OutputBuffer:
    """Merged stdout/stderr in arrival order. ``add`` is called by both pipe readers."""

    def __init__(self, spill: SpillFile) -> None:
        self._spill = spill
        self._head = bytearray()
        self._tail = bytearray()
        self._lock = asyncio.Lock()
        self.total = 0
        self._spilling = False

    async def add(self, data: bytes) -> None:
        async with self._lock:
            if not self._spilling and self.total + len(data) > HEAD_BYTES + TAIL_BYTES:
                self._spilling = True
                everything = bytes(self._head + self._tail) + data
                await asyncio.to_thread(self._spill.write, everything)
            elif self._spilling:
                await asyncio.to_thread(self._spill.write, data)
            self.total += len(data)
            room = HEAD_BYTES - len(self._head)
            if room > 0:
                self._head += data[:room]
                data = data[room:]
            self._tail += data
            if len(self._tail) > TAIL_BYTES:
                del self._tail[: len(self._tail) - TAIL_BYTES]

    def capped_text(self) -> str:
        """What the kernel-denial check looks at: head + tail."""
        return _decode(bytes(self._head + self._tail))

    @property
    def omitted(self) -> int:
        return self.total - len(self._head) - len(self._tail)

    def render(self, *, keep_spill: bool) -> str:
        """Head + omission note + tail; the note names the spill file only if it is kept."""
        head = _decode(bytes(self._head))
        tail = _decode(bytes(self._tail))
        if self.omitted <= 0:
            return head + tail
        note = omission_note(self.omitted, self._spill if keep_spill else None)
        return f"{head}\n{note}\n{tail}"

    async def close(self, *, keep: bool) -> None:
        if keep and self.omitted > 0:
            await asyncio.to_thread(self._spill.close)
        else:
            await asyncio.to_thread(self._spill.discard)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")
