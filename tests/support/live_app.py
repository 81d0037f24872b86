"""The daemon's ASGI app over a real OpenWorkCore, served by uvicorn on a loopback port inside
the test's event loop (real HTTP and streaming, a scripted model behind it)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Generator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx
import uvicorn

from openwork_core.daemon.app import create_app
from openwork_core.service import OpenWorkCore
from tests.support.contract import contract_client

TOKEN = "desktop-test-token"


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield  # the test runner keeps its own signal handlers

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.listening.set()


@dataclass
class LiveApp:
    url: str
    shutdown: asyncio.Event

    def client(self, token: str | None = TOKEN) -> httpx.AsyncClient:
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        return contract_client(base_url=self.url, headers=headers, timeout=20)


@asynccontextmanager
async def live_app(core: OpenWorkCore, version: str = "test") -> AsyncIterator[LiveApp]:
    shutdown = asyncio.Event()
    app = create_app(
        core,
        token=TOKEN,
        allowed_origins=frozenset(),
        allow_remote=False,
        version=version,
        shutdown=shutdown,
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = _Server(
        uvicorn.Config(
            app, log_config=None, access_log=False, lifespan="off", timeout_graceful_shutdown=2
        )
    )
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(15):
            await server.listening.wait()
        yield LiveApp(url=f"http://127.0.0.1:{port}", shutdown=shutdown)
    finally:
        shutdown.set()
        server.should_exit = True
        async with asyncio.timeout(15):
            await task
        sock.close()
