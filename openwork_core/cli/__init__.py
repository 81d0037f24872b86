"""The ``openwork`` command line (typer + rich)."""

from openwork_core.cli.main import app, main

__all__ = ["app", "main"]
