"""The ``openwork`` command tree (typer; the console script is ``cli/entry.py::main``): the daemon (``serve``), its database (``migrate``), a self-check
(``doctor``), and the client commands of a running daemon (``chat``, ``sessions``, ``inspect``,
``status``, ``stop``, ``logs``, ``mcp``) found through ``OPENWORK_HOME/daemon.json``.

Each command's module is imported only when that command runs (or ``--help`` lists them): the
daemon's start (issue 13 §3) does not pay for the client commands' HTTP client and terminal UI.

Exit statuses: ``cli/errors.py::ExitStatus`` (``--help`` lists them)."""

from __future__ import annotations

import importlib
from typing import Any

import typer
from typer.core import TyperGroup

from openwork_core.cli.errors import exit_status_help
from openwork_core.version import app_version

COMMAND_MODULES: dict[str, str] = {
    "serve": "openwork_core.cli.server_cmds",
    "migrate": "openwork_core.cli.server_cmds",
    "doctor": "openwork_core.cli.doctor",
    "chat": "openwork_core.cli.session_cmds",
    "sessions": "openwork_core.cli.session_cmds",
    "inspect": "openwork_core.cli.session_cmds",
    "status": "openwork_core.cli.daemon_cmds",
    "stop": "openwork_core.cli.daemon_cmds",
    "logs": "openwork_core.cli.daemon_cmds",
    "mcp": "openwork_core.cli.mcp_cmds",
}
"""Command → the module whose ``register(app)`` defines it, in the order ``--help`` lists them."""


class LazyCommands(TyperGroup):
    """The root group: a command of ``COMMAND_MODULES`` is built from its module on first use.
    The context and command are click's, which typer vendors under a private module: they are
    typed ``Any`` here rather than imported from it."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMAND_MODULES, *super().list_commands(ctx)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        module = COMMAND_MODULES.get(cmd_name)
        if module is None:
            return super().get_command(ctx, cmd_name)
        commands = typer.Typer(rich_markup_mode=None)
        importlib.import_module(module).register(commands)
        return typer.main.get_group(commands).get_command(ctx, cmd_name)


app = typer.Typer(
    cls=LazyCommands,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="OpenWork: a coding-agent daemon and its command line.",
    epilog=exit_status_help(),
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


@app.command(hidden=True)
def version() -> None:
    """Print the version (same as --version)."""
    typer.echo(app_version())
