"""Spill retention (storage.md §3, tools.md §8): at startup, per-session spill directories
untouched for 7 days are deleted. Blocking; run it off the event loop."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

SPILL_RETENTION_SECONDS = 7 * 24 * 3600


def stale_spill_dirs(spill_root: Path, now: float, retention_s: float) -> list[Path]:
    """Session directories under ``spill_root`` whose newest entry is older than the retention."""
    if not spill_root.is_dir():
        return []
    stale: list[Path] = []
    for directory in spill_root.iterdir():
        if not directory.is_dir() or directory.is_symlink():
            continue
        newest = max([directory.stat().st_mtime, *(f.stat().st_mtime for f in directory.iterdir())])
        if now - newest > retention_s:
            stale.append(directory)
    return stale


def sweep_spill_dirs(
    spill_root: Path, retention_s: float = SPILL_RETENTION_SECONDS, now: float | None = None
) -> list[Path]:
    removed = stale_spill_dirs(spill_root, time.time() if now is None else now, retention_s)
    for directory in removed:
        shutil.rmtree(directory, ignore_errors=True)
    return removed
