"""``openwork serve`` and ``openwork migrate``: the commands that own the database."""

from __future__ import annotations

import asyncio
import logging
import sys

import typer

from openwork_core.config import ConfigError, OpenWorkSettings, load_settings


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command()(migrate)


def _run(coroutine_factory: object) -> int:
    import uvloop

    assert callable(coroutine_factory)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        code = runner.run(coroutine_factory())
    assert isinstance(code, int)
    return code


def serve(
    allow_remote: bool = typer.Option(
        False,
        "--allow-remote",
        help="Listen on non-loopback addresses and accept any Host (needs OPENWORK_TOKEN; "
        "same as OPENWORK_ALLOW_REMOTE=true).",
    ),
) -> None:
    """Run the daemon until SIGTERM/SIGINT (running turns end cancelled, exit 0)."""
    settings = load_settings()

    async def run() -> int:
        from openwork_core.daemon.server import serve as serve_daemon

        return await serve_daemon(settings, allow_remote=allow_remote)

    sys.exit(_run(run))


def migrate() -> None:
    """Apply pending database migrations and exit (serve does it at start too)."""
    settings = load_settings()

    async def run() -> int:
        return await apply_pending(settings)

    sys.exit(_run(run))


async def apply_pending(settings: OpenWorkSettings) -> int:
    from openwork_core.daemon.server import MIGRATION_FIX
    from openwork_core.daemon.startup import embedded_home_guard, open_database
    from openwork_core.logs import configure_logging
    from openwork_core.storage import apply_migrations, discover_migrations
    from openwork_core.storage.errors import MigrationChecksumMismatch, MigrationLayoutError

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
