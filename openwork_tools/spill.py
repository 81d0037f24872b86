"""Spill files for cut output and the fallback cut of over-long results (tools.md §8).

All functions here do blocking file I/O; async callers run them with ``asyncio.to_thread``.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import BinaryIO

from openwork_tools.results import RESULT_TEXT_LIMIT

SPILL_FILE_LIMIT = 64 * 1024 * 1024
SESSION_SPILL_LIMIT = 1024 * 1024 * 1024
"""All spill files of one session together (issue 22 point 5): a new file gets what is left."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def spill_file_name(call_id: str) -> str:
    """``<tool-call-id>.txt`` with every char outside ``[A-Za-z0-9_-]`` replaced by ``_``."""
    return f"{_UNSAFE.sub('_', call_id)}.txt"


def spilled_bytes(spill_dir: Path) -> int:
    """The size of the spill files already in ``spill_dir`` (its top level: the session's temp
    dir below it is not spill)."""
    total = 0
    with contextlib.suppress(OSError), os.scandir(spill_dir) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
    return total


class SpillFile:
    """A lazily created spill file capped at 64 MiB, and at what the session's other spill files
    leave of ``SESSION_SPILL_LIMIT`` (one session's calls run one at a time); any I/O failure
    makes it unusable, silently."""

    def __init__(self, spill_dir: Path | None, call_id: str) -> None:
        self.path: Path | None = spill_dir / spill_file_name(call_id) if spill_dir else None
        self._fh: BinaryIO | None = None
        self.failed = spill_dir is None
        self.written = 0
        self.capped = False
        self.limit = SPILL_FILE_LIMIT
        self.session_full = False
        """The session's spill total left this file less than ``SPILL_FILE_LIMIT``."""

    def write(self, data: bytes) -> None:
        if self.failed or self.capped or self.path is None:
            return
        if self._fh is None and self.written == 0:
            left = SESSION_SPILL_LIMIT - spilled_bytes(self.path.parent)
            if left < SPILL_FILE_LIMIT:
                self.limit, self.session_full = max(0, left), True
        room = self.limit - self.written
        if len(data) > room:
            data = data[:room]
            self.capped = True
        if not data:
            return
        try:
            if self._fh is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fh = self.path.open("wb")
            self._fh.write(data)
            self.written += len(data)
        except OSError:
            self.failed = True
            self.discard()

    def close(self) -> None:
        if self._fh is not None:
            try:
                self._fh.close()
            except OSError:
                self.failed = True
            self._fh = None

    def discard(self) -> None:
        """Remove the partial file (nothing omitted, or a failed run)."""
        self.close()
        if self.path is not None:
            with contextlib.suppress(OSError):
                self.path.unlink(missing_ok=True)

    @property
    def saved_path(self) -> Path | None:
        return None if self.failed or (self._fh is None and self.written == 0) else self.path


def omission_note(omitted: int, spill: SpillFile | None) -> str:
    """The middle/footer text for ``omitted`` bytes, naming the spill file only when it exists."""
    path = spill.saved_path if spill is not None else None
    full = spill is not None and spill.session_full
    if path is None:
        if full:
            return (
                f"... ({omitted} bytes omitted; nothing was saved: this session's saved output "
                f"reached its {SESSION_SPILL_LIMIT // 2**20} MB total.)"
            )
        return f"... ({omitted} bytes omitted.)"
    if spill is not None and spill.capped:
        saved = f"{spill.written} bytes" if full else "64 MB"
        return (
            f"... ({omitted} bytes omitted. Only the first {saved} were saved at {path} — "
            "use read with offset/limit, or grep, to look at it.)"
        )
    return (
        f"... ({omitted} bytes omitted. Full output saved at {path} — "
        "use read with offset/limit, or grep, to look at it.)"
    )


def cut_utf8(data: bytes, limit: int) -> bytes:
    """The longest prefix of ``data`` of at most ``limit`` bytes that ends on a char boundary."""
    if len(data) <= limit:
        return data
    end = limit
    while end > 0 and (data[end] & 0xC0) == 0x80:
        end -= 1
    return data[:end]


def fallback_cut(text: str, spill_dir: Path | None, call_id: str) -> str:
    """Bound ``text`` to 32,000 bytes: head + footer, the full text spilled (tools.md §8).

    When the tool already spilled under this call id (bash), the text goes to
    ``<call-id>-result.txt`` so the tool's own spill is not overwritten."""
    # A lone surrogate (a file name that is not UTF-8, an MCP server's "\ud83d") has no UTF-8
    # form: passed through as three bytes and back, so measuring and cutting never fail on it.
    data = text.encode(errors="surrogatepass")
    if len(data) <= RESULT_TEXT_LIMIT:
        return text
    spill = SpillFile(spill_dir, call_id)
    if spill.path is not None and spill.path.exists():
        spill = SpillFile(spill_dir, f"{call_id}-result")
    spill.write(data)
    spill.close()
    budget = RESULT_TEXT_LIMIT - len(omission_note(len(data), spill).encode()) - 1
    head = cut_utf8(data, budget)
    newline = head.rfind(b"\n")
    if newline >= budget // 2:
        head = head[: newline + 1]
    note = omission_note(len(data) - len(head), spill)
    sep = "" if head.endswith(b"\n") else "\n"
    return head.decode(errors="surrogatepass") + sep + note
