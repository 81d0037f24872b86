"""A raw asyncio server on loopback for tests that need to misbehave below HTTP's rules (answers
that trickle, bodies of any size, a proxy that records the request line)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def loopback_server(handler: Handler) -> AsyncIterator[str]:
    """Each connection to 127.0.0.1 handed to ``handler``; yields ``http://127.0.0.1:<port>``."""
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        server.close()
