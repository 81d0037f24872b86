"""The daemon's MCP servers, as ``OpenWorkCore`` owns them (issue 27; docs/mcp.md "Lifecycle").

``start`` returns at once; in the background it reads the stored servers and, when there is any
server at all, imports the SDK (in a worker thread: it is a large import) and starts
``manager.McpManager``. Without a server the SDK is never imported and the surface is empty. A
``PUT`` creates the manager if there was none. ``generation`` and ``surface`` are what sessions
read (``SurfaceSource``)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from openwork_core.mcp.config import McpServerConfig
from openwork_core.mcp.store import McpSecretsFile, McpServerStore
from openwork_core.mcp.surface import McpSurface, empty_surface
from openwork_tools.modes import SandboxStatus

if TYPE_CHECKING:
    from openwork_core.mcp.manager import McpManager, ServerView

log = structlog.get_logger(__name__)


class McpRuntime:
    def __init__(
        self,
        *,
        store: McpServerStore,
        secrets: McpSecretsFile,
        configured: Mapping[str, McpServerConfig],
        sandbox: SandboxStatus,
        daemon_home: Path,
        client_version: str,
    ) -> None:
        self._store = store
        self._secrets = secrets
        self._configured = dict(configured)
        self._sandbox = sandbox
        self._daemon_home = daemon_home
        self._client_version = client_version
        self._manager: McpManager | None = None
        self._startup: asyncio.Task[None] | None = None
        self._creating = asyncio.Lock()

    # -- SurfaceSource -------------------------------------------------------------------------
    @property
    def generation(self) -> int:
        return 0 if self._manager is None else self._manager.generation + 1

    def surface(self) -> McpSurface:
        return empty_surface(self) if self._manager is None else self._manager.surface()

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        self._startup = asyncio.get_running_loop().create_task(self._start(), name="mcp-start")

    async def started(self) -> None:
        """Until every server is created (not until each is ready)."""
        if self._startup is not None:
            await asyncio.shield(self._startup)

    async def _start(self) -> None:
        try:
            stored = await self._store.list_mcp_servers()
        except Exception as exc:  # the file's servers start all the same
            log.warning("mcp.stored_servers_unreadable", error=f"{type(exc).__name__}: {exc}")
            stored = {}
        if self._configured or stored:
            manager = await self._create()
            await asyncio.to_thread(self._secrets.load)
            manager.start(self._configured, stored)
        log.info("mcp.started", servers=len(self._configured.keys() | stored.keys()))

    async def _create(self) -> McpManager:
        async with self._creating:
            if self._manager is None:
                module = await asyncio.to_thread(
                    importlib.import_module, "openwork_core.mcp.manager"
                )
                self._manager = module.McpManager(
                    store=self._store,
                    secrets=self._secrets,
                    sandbox=self._sandbox,
                    daemon_home=self._daemon_home,
                    client_version=self._client_version,
                    source=self,
                )
            return self._manager

    async def close(self) -> None:
        if self._startup is not None:
            self._startup.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._startup
        if self._manager is not None:
            await self._manager.close()

    # -- the API ---------------------------------------------------------------------------------
    async def views(self) -> list[ServerView]:
        await self.started()
        return [] if self._manager is None else self._manager.views()

    async def put(self, name: str, config: McpServerConfig) -> ServerView:
        await self.started()
        return await (await self._create()).put(name, config)

    async def delete(self, name: str) -> None:
        await self.started()
        manager = await self._create()
        await manager.delete(name)

    async def test(self, name: str) -> ServerView:
        await self.started()
        return await (await self._create()).test(name)
