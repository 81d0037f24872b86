"""The `openwork` command."""

from __future__ import annotations

import asyncio
import sys

import typer

from openwork_core.config import OpenWorkSettings

app = typer.Typer(add_completion=False, no_args_is_help=True)


@app.command()
def serve(
    allow_remote: bool = typer.Option(
        False, "--allow-remote", help="listen on non-loopback addresses and accept any Host"
    ),
) -> None:
    """Run the daemon until SIGTERM/SIGINT."""
    settings = OpenWorkSettings()
    import uvloop

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        code = runner.run(_serve(settings, allow_remote))
    sys.exit(code)


async def _serve(settings: OpenWorkSettings, allow_remote: bool) -> int:
    from openwork_core.daemon.server import serve as run

    return await run(settings, allow_remote=allow_remote)


@app.command()
def version() -> None:
    """Print the version."""
    from openwork_core.daemon.server import app_version

    typer.echo(app_version())


def main() -> None:
    app()
