"""Kept for ``python -m openwork_core.daemon`` and old imports: the command line now lives in
``openwork_core.cli`` (``app`` is imported on first use there and here)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openwork_core.cli import __getattr__, main

if TYPE_CHECKING:
    from openwork_core.cli import app

__all__ = ["__getattr__", "app", "main"]
