"""Kept for ``python -m openwork_core.daemon`` and old imports: the command line now lives in
``openwork_core.cli``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openwork_core.cli import main

if TYPE_CHECKING:
    from typer import Typer

    app: Typer


def __getattr__(name: str) -> object:
    if name == "app":
        from openwork_core.cli import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["app", "main"]
