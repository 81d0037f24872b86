"""The ``openwork`` command line (typer + rich). ``main`` is the console script; ``app``, the
typer command tree, is imported on first use (``openwork serve`` runs without it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openwork_core.cli.entry import main

if TYPE_CHECKING:
    from typer import Typer

    app: Typer


def __getattr__(name: str) -> object:
    if name == "app":
        from openwork_core.cli.commands import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["app", "main"]
