"""``openwork serve`` and ``openwork migrate``: the commands that own the database."""

from __future__ import annotations

import logging
import sys

import typer

from openwork_core.cli.server_run import run_on_loop, serve_daemon
from openwork_core.config import ConfigError, OpenWorkSettings, load_settings
from openwork_core.daemon.server import MIGRATION_FIX
from openwork_core.daemon.startup import embedded_home_guard, open_database
from openwork_core.logs import configure_logging
from openwork_core.storage.errors import MigrationChecksumMismatch, MigrationLayoutError
from openwork_core.storage.migrate import apply_migrations, discover_migrations


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command()(migrate)


def serve(
    allow_remote: bool = typer.Option(
        False,
        "--allow-remote",
        help="Listen on non-loopback addresses and accept any Host (needs OPENWORK_TOKEN; "
        "same as OPENWORK_ALLOW_REMOTE=true).",
    ),
) -> None:
    """Run the daemon until SIGTERM/SIGINT.

    Running turns end cancelled; exit 0."""
    serve_daemon(allow_remote=allow_remote)  # as `openwork serve` does without typer (entry.py)


def migrate() -> None:
    """Apply pending database migrations and exit.

    `openwork serve` applies them at start too."""
    settings = load_settings()

    async def run() -> int:
        return await apply_pending(settings)

    sys.exit(run_on_loop(run))


async def apply_pending(settings: OpenWorkSettings) -> int:
    logging_setup = configure_logging(settings.log_format, level=logging.WARNING)
    try:
        known = discover_migrations()
        with embedded_home_guard(settings) as running:
            if running is not None:
                print(f"{running}: it applied the migrations when it started; nothing to do")
                return 0
            async with open_database(settings) as database, database.pool.acquire() as conn:
                applied = await apply_migrations(conn)
    except (MigrationChecksumMismatch, MigrationLayoutError) as exc:
        raise ConfigError("OPENWORK_DATABASE_URL", str(exc), MIGRATION_FIX) from None
    finally:
        logging_setup.close()
    for name in applied:
        print(f"applied {name}")
    print(
        f"database {database.display}: {len(known)} migrations, {len(applied)} applied now, "
        "schema current"
    )
    return 0
