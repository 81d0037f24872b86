"""The full-list spill of grep and glob: 256 KiB in memory first, then streamed (tools.md §8)."""

from __future__ import annotations

from pathlib import Path

from openwork_tools.spill import SpillFile

BUFFER_BYTES = 256 * 1024


class ListingSpill:
    """Collects every full-list line; a file is left only when something was omitted."""

    def __init__(self, spill_dir: Path | None, call_id: str) -> None:
        self._file = SpillFile(spill_dir, call_id)
        self._buffer: list[bytes] = []
        self._buffered = 0
        self._streaming = False
        self.omitted = False
        self._kept = False

    def add(self, line: str) -> None:
        data = (line + "\n").encode(errors="surrogateescape")  # a name's own bytes (not UTF-8)
        if self._streaming:
            self._file.write(data)
            return
        self._buffer.append(data)
        self._buffered += len(data)
        if self._buffered > BUFFER_BYTES:
            self._flush()

    def _flush(self) -> None:
        self._streaming = True
        self._file.write(b"".join(self._buffer))
        self._buffer.clear()
        self._buffered = 0

    def finish(self, *, keep: bool) -> None:
        """Blocking: write or discard the file."""
        if keep:
            self._flush()
            self._file.close()
            self._kept = self._file.saved_path is not None
        else:
            self._buffer.clear()
            self._file.discard()

    def saved_note(self) -> str:
        path = self._file.saved_path if self._kept else None
        if path is None:
            return ""
        capped = " (only the first 64 MB)" if self._file.capped else ""
        return f"; full list{capped} saved to {path}"
