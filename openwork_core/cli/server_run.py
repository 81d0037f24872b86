"""Running the commands that own the database on the event loop (uvloop), without typer: the
daemon's start (``openwork serve``) and ``openwork migrate``."""

from __future__ import annotations

import asyncio
import gc
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
        # The daemon's modules allocate ~130 000 objects that live as long as the process: the
        # collector's passes over them during the import only cost time (45 ms of this start on
        # this machine), and frozen afterwards no later collection walks them again.
        gc.disable()
        try:
            from openwork_core.daemon.server import serve
        finally:
            gc.freeze()
            gc.enable()
        return await serve(settings, allow_remote=allow_remote)

    code = run_on_loop(run)
    # Stopped: everything the daemon owns is closed. The interpreter's last collection would only
    # walk every object of the loaded modules (0.5 CPU-s and as long of each exit on this
    # machine); frozen, they are skipped. Reference counting still frees (and flushes) the rest,
    # and the atexit hooks (logging's flush) still run.
    gc.freeze()
    sys.exit(code)
