"""Directories bash can see: the sandbox shows a session its own ``/tmp`` and masks the host's
(issue 22), so a test whose workspace, home or "outside" directory must be visible inside bash,
as a user's are, makes them here instead of under pytest's ``tmp_path`` (which is in ``/tmp``)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

VISIBLE_ROOT = Path(__file__).resolve().parents[1] / "artifacts" / "visible"
"""Under ``tests/artifacts`` (ignored by git), in the checkout, which is never a runtime dir."""


@contextmanager
def visible_dir() -> Iterator[Path]:
    """A fresh directory outside every runtime dir the sandbox masks; removed afterwards."""
    VISIBLE_ROOT.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(dir=VISIBLE_ROOT)).resolve()
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
