"""Kept for ``python -m openwork_core.daemon`` and old imports: the command line now lives in
``openwork_core.cli``."""

from __future__ import annotations

from openwork_core.cli import app, main

__all__ = ["app", "main"]
