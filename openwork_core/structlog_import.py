"""Importing structlog for the daemon without ``rich`` (issue 13 §3).

``import structlog`` imports ``structlog.dev``, which imports ``rich`` (and pygments) whenever it
is installed, to offer rich tracebacks: 35–60 ms of the daemon's start. The daemon never renders
with it — ``logs.py`` formats exceptions with ``format_exc_info`` before any renderer sees them, so
its output is the same either way. ``import_structlog_without_rich`` imports structlog while
``rich`` reads as absent, the way structlog supports (``rich = None``), and then puts nothing back
in its place: ``rich`` stays importable, and any later ``import rich`` loads it as usual."""

from __future__ import annotations

import importlib
import sys

_HIDDEN = "rich"


def import_structlog_without_rich() -> None:
    """First thing on the daemon's start path; nothing when structlog or rich is loaded already
    (then structlog keeps whatever it found)."""
    if "structlog" in sys.modules or _HIDDEN in sys.modules:
        return
    sys.modules[_HIDDEN] = None  # type: ignore[assignment]  # `import rich` raises ImportError
    try:
        importlib.import_module("structlog")
    finally:
        del sys.modules[_HIDDEN]
