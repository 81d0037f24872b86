"""The ``openwork`` command: the daemon (``serve``), its database (``migrate``), a self-check
(``doctor``), and the client commands of a running daemon (``chat``, ``sessions``, ``inspect``,
``status``, ``stop``, ``logs``) found through ``OPENWORK_HOME/daemon.json``.

Exit codes: 0 done; 1 the turn or a check failed; 2 a usage or configuration error (one line that
names the setting); 3 no daemon is running; 130 interrupted."""

from __future__ import annotations

import sys

import typer

from openwork_core.cli import daemon_cmds, doctor, server_cmds, session_cmds
from openwork_core.cli.client import CliError
from openwork_core.config import ConfigError
from openwork_core.version import app_version

EXIT_CONFIG = 2

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="OpenWork: a coding-agent daemon and its command line.",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"openwork {app_version()}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """OpenWork: a coding-agent daemon and its command line."""


server_cmds.register(app)
doctor.register(app)
session_cmds.register(app)
daemon_cmds.register(app)


@app.command(hidden=True)
def version() -> None:
    """Print the version (same as --version)."""
    typer.echo(app_version())


def main() -> None:
    try:
        app()
    except ConfigError as exc:
        print(f"openwork: {exc}", file=sys.stderr)
        sys.exit(EXIT_CONFIG)
    except CliError as exc:
        print(f"openwork: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
