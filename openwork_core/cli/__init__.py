"""The ``openwork`` command line (typer + rich). ``main`` (``cli/entry.py``) is the console script;
the typer command tree is ``cli/commands.py::app``, which ``openwork serve`` never imports."""

from __future__ import annotations

from openwork_core.cli.entry import main

__all__ = ["main"]
