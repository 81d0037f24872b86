"""Every MCP server of the daemon (issue 27 points 1–3; docs/mcp.md "Lifecycle").

One ``McpConnection`` per server, each started in its own background task by ``start``
(``runtime.McpRuntime`` creates the manager once there is a server). ``generation`` moves whenever the Tool Surface a new
load would get may differ: a server became ready (first start or restart), its listing changed
(``tools/list_changed``), or a server was put or deleted. Loaded sessions compare it at their
next turn boundary (``TurnToolset.refreshed``).

The TOML file's servers win over stored ones of the same name and cannot be changed through the
API (``McpServerFromConfig``)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from openwork_chat_state.error_root import NotFound, OpenWorkError
from openwork_chat_state.messages import ToolDefinition
from openwork_core.mcp.config import McpSecrets, McpServerConfig, ServerSource, merged_servers
from openwork_core.mcp.connection import McpConnection, describe
from openwork_core.mcp.listing import Listing
from openwork_core.mcp.names import qualified_names
from openwork_core.mcp.store import McpSecretsFile, McpServerStore
from openwork_core.mcp.surface import McpSurface, ServerStatus, SurfaceSource, tool_tokens
from openwork_core.mcp.tool import build_surface
from openwork_tools.modes import SandboxStatus


class McpServerFromConfig(OpenWorkError):
    """409: the server is defined in the TOML config file; edit the file instead."""

    code = "mcp_server_in_config_file"
    http_status = 409

    def __init__(self, name: str) -> None:
        super().__init__(f"the MCP server {name} is defined in the config file; change it there")


class McpServerNotFound(NotFound):
    def __init__(self, name: str) -> None:
        super().__init__(f"unknown MCP server: {name}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCost:
    name: str
    """The server's own name of the tool."""
    advertised_as: str
    tokens: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerView:
    name: str
    source: ServerSource
    config: McpServerConfig
    status: ServerStatus
    reason: str | None
    tools: tuple[ToolCost, ...]
    skipped: tuple[tuple[str, str], ...]


def tool_costs(server: str, listing: Listing) -> tuple[ToolCost, ...]:
    """Each tool's model-visible name and token cost, as if its server were the only one."""
    names = qualified_names((server, t.name) for t in listing.tools)
    costs = []
    for tool in listing.tools:
        name = names[(server, tool.name)]
        definition = ToolDefinition(
            name=name, description=tool.description, parameters=tool.input_schema
        )
        costs.append(ToolCost(name=tool.name, advertised_as=name, tokens=tool_tokens(definition)))
    return tuple(costs)


class McpManager:
    def __init__(
        self,
        *,
        store: McpServerStore,
        secrets: McpSecretsFile,
        sandbox: SandboxStatus,
        daemon_home: Path,
        client_version: str,
        source: SurfaceSource,
    ) -> None:
        self._store = store
        self._secrets = secrets
        self._source = source
        self._sandbox = sandbox
        self._daemon_home = daemon_home
        self._client_version = client_version
        self._connections: dict[str, McpConnection] = {}
        self._sources: dict[str, ServerSource] = {}
        self._generation = 0
        self._lock = asyncio.Lock()

    # -- the surface ---------------------------------------------------------------------------
    @property
    def generation(self) -> int:
        return self._generation

    def surface(self) -> McpSurface:
        return build_surface(self._generation, self._connections, self, self._source)

    def connection(self, server: str) -> McpConnection | None:
        return self._connections.get(server)

    def _changed(self, server: str) -> None:
        self._generation += 1

    # -- lifecycle -----------------------------------------------------------------------------
    def start(
        self,
        configured: Mapping[str, McpServerConfig],
        stored: Mapping[str, McpServerConfig],
    ) -> None:
        """Start every server: the file's, then the stored ones it does not name (with their
        secrets from the key file, loaded before)."""
        with_secrets = {name: c.with_secrets(self._secrets.get(name)) for name, c in stored.items()}
        for name, (config, source) in merged_servers(configured, with_secrets).items():
            self._add(name, config, source)

    def _add(self, name: str, config: McpServerConfig, source: ServerSource) -> None:
        connection = McpConnection(
            name,
            config,
            sandbox=self._sandbox,
            daemon_home=self._daemon_home,
            client_version=self._client_version,
            on_ready=self._changed,
        )
        self._connections[name] = connection
        self._sources[name] = source
        connection.start()

    async def close(self) -> None:
        connections = list(self._connections.values())
        self._connections.clear()
        await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)

    # -- the API ---------------------------------------------------------------------------------
    def views(self) -> list[ServerView]:
        return [self._view(name) for name in sorted(self._connections)]

    def _view(self, name: str) -> ServerView:
        connection = self._connections[name]
        listing = connection.listing if connection.status is ServerStatus.READY else None
        return ServerView(
            name=name,
            source=self._sources[name],
            config=connection.config,
            status=connection.status,
            reason=connection.reason,
            tools=() if listing is None else tool_costs(name, listing),
            skipped=() if listing is None else tuple((s.name, s.reason) for s in listing.skipped),
        )

    async def put(self, name: str, config: McpServerConfig) -> ServerView:
        """The row, then the key file, then the server (re)started with its new settings."""
        async with self._lock:
            if self._sources.get(name) == "config":
                raise McpServerFromConfig(name)
            await self._store.put_mcp_server(name, config)
            await asyncio.to_thread(self._secrets.set, name, config.secrets())
            await self._remove(name)
            self._add(name, config, "api")
            self._generation += 1
            return self._view(name)

    async def delete(self, name: str) -> None:
        async with self._lock:
            source = self._sources.get(name)
            if source == "config":
                raise McpServerFromConfig(name)
            if source is None:
                raise McpServerNotFound(name)
            await self._store.delete_mcp_server(name)
            await asyncio.to_thread(self._secrets.set, name, McpSecrets())
            await self._remove(name)
            self._generation += 1

    async def _remove(self, name: str) -> None:
        connection = self._connections.pop(name, None)
        self._sources.pop(name, None)
        if connection is not None:
            await connection.stop()

    async def test(self, name: str) -> ServerView:
        """Start the server once more, apart from the daemon's own client, list its tools and
        stop it: the listing, or why it failed (``openwork mcp test``; nothing is called)."""
        current = self._connections.get(name)
        if current is None:
            raise McpServerNotFound(name)
        probe = McpConnection(
            name,
            current.config.model_copy(update={"enabled": True}),
            sandbox=self._sandbox,
            daemon_home=self._daemon_home,
            client_version=self._client_version,
            on_ready=lambda _: None,
        )
        try:
            listing: Listing | None = await probe.list_once()
            problem = None
        except Exception as exc:
            listing, problem = None, describe(exc)
        view = ServerView(
            name=name,
            source=self._sources[name],
            config=current.config,
            status=ServerStatus.READY if listing is not None else ServerStatus.FAILED,
            reason=problem,
            tools=() if listing is None else tool_costs(name, listing),
            skipped=() if listing is None else tuple((s.name, s.reason) for s in listing.skipped),
        )
        return view
