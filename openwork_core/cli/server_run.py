"""Running the commands that own the database on the event loop (uvloop), without typer: the
daemon's start (``openwork serve``) and ``openwork migrate``."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable

from openwork_core.config import load_settings


def run_on_loop(coroutine_factory: Callable[[], Awaitable[int]]) -> int:
    import uvloop

    async def run() -> int:
        return await coroutine_factory()

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(run())


def serve_daemon(*, allow_remote: bool) -> None:
    """Run the daemon until SIGTERM/SIGINT, then exit with its code."""
    settings = load_settings()

    async def run() -> int:
        from openwork_core.daemon.server import serve

        return await serve(settings, allow_remote=allow_remote)

    sys.exit(run_on_loop(run))
