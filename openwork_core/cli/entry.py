"""The ``openwork`` console script. ``openwork serve`` (with or without ``--allow-remote``) starts
the daemon without building the typer command tree (issue 13 §3: the daemon's start pays for
neither typer nor the client commands); every other command line, ``serve --help`` and a wrong
``serve`` included, is parsed by the typer app (``cli/commands.py``), which runs ``serve`` the same
way. Errors are the same one line and exit code either way."""

from __future__ import annotations

import sys
from collections.abc import Callable

from openwork_core.cli.errors import CliError, ExitStatus

SERVE_FLAGS = frozenset({"--allow-remote"})
"""``serve``'s options (``server_cmds.serve`` declares them for typer and its help)."""


def serve_without_cli_tree(args: list[str]) -> bool | None:
    """``--allow-remote``'s value when ``args`` is a valid plain ``serve``, else None."""
    if not args or args[0] != "serve" or not set(args[1:]) <= SERVE_FLAGS:
        return None
    return "--allow-remote" in args[1:]


def run_cli() -> None:
    from openwork_core.cli.commands import app

    app()


def main() -> None:
    allow_remote = serve_without_cli_tree(sys.argv[1:])
    from openwork_core.config import ConfigError  # this module imports nothing heavy: first

    command: Callable[[], None] = run_cli
    if allow_remote is not None:
        from openwork_core.cli.server_run import serve_daemon

        def command() -> None:
            serve_daemon(allow_remote=allow_remote)

    try:
        command()
    except ConfigError as exc:
        print(f"openwork: {exc}", file=sys.stderr)
        sys.exit(ExitStatus.USAGE)
    except CliError as exc:
        print(f"openwork: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
