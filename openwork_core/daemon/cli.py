"""Kept for ``python -m openwork_core.daemon``: the command line lives in ``openwork_core.cli``."""

from __future__ import annotations

from openwork_core.cli import main

__all__ = ["main"]
