"""One MCP server's client, supervised (issue 27 point 2; docs/mcp.md "Lifecycle").

One task per server: connect (the SDK's ``Client``: initialize, then ``tools/list`` page by page)
within ``startup_timeout_seconds``, then serve calls until the connection ends — the stdio
server's output ends, a ping every ``PING_INTERVAL_S`` goes unanswered, or a call found it closed
— and start again after a back-off that doubles from ``BACKOFF_FIRST_S`` to ``BACKOFF_MAX_S``
(reset once a connection stayed up ``STABLE_S``). A ``tools/list_changed`` notification lists
the tools again; ``on_ready`` is told of every (re)start and every listing that changed.

Nothing a server does ends this task but ``stop``: every failure is the ``failed`` status with
its reason, and the next attempt."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as mcp
import structlog
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError

from openwork_core.mcp.config import McpServerConfig, Transport
from openwork_core.mcp.launch import stdio_launch
from openwork_core.mcp.listing import MAX_LISTED, Listing, listing_of
from openwork_core.mcp.surface import ServerStatus
from openwork_core.mcp.transport import MAX_MESSAGE_BYTES, ProcessWatch, stdio_transport
from openwork_tools.modes import SandboxStatus

log = structlog.get_logger(__name__)

BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 30.0
STABLE_S = 30.0
PING_INTERVAL_S = 15.0
PING_TIMEOUT_S = 10.0
HTTP_TIMEOUT_S = 30.0
CLIENT_NAME = "openwork"


class ServerUnavailable(RuntimeError):
    """The server is not connected now (the call was not sent)."""


class ConnectionLost(RuntimeError):
    """The connection ended while the call was in flight (its outcome is unknown)."""


class _Ended(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def describe(exc: BaseException) -> str:
    """One line for the ``reason`` (an exception group names its first leaf)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return "it did not answer in time"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300]}" if text else type(exc).__name__


class McpConnection:
    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        sandbox: SandboxStatus,
        daemon_home: Path,
        client_version: str,
        on_ready: Callable[[str], None],
    ) -> None:
        self.name = name
        self.config = config
        self._sandbox = sandbox
        self._daemon_home = daemon_home
        self._client_version = client_version
        self._on_ready = on_ready
        self.status = ServerStatus.STARTING if config.enabled else ServerStatus.DISABLED
        self.reason: str | None = None if config.enabled else "disabled in its configuration"
        self.listing: Listing | None = None
        self._client: Client | None = None
        self._wake = asyncio.Event()
        self._relist = False
        self._task: asyncio.Task[None] | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        if self.config.enabled and self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._supervise(), name=f"mcp-{self.name}"
            )

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        self._client = None

    async def _supervise(self) -> None:
        failures = 0
        while True:
            started = time.monotonic()
            reason = await self._connect_once()
            if time.monotonic() - started >= STABLE_S:
                failures = 0
            self._client = None
            self.status, self.reason = ServerStatus.FAILED, reason
            delay = min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2**failures)
            failures += 1
            log.warning("mcp.server_failed", server=self.name, reason=reason, retry_in_s=delay)
            await asyncio.sleep(delay)
            self.status = ServerStatus.STARTING

    async def _connect_once(self) -> str:
        """One connection, from start to end; the reason it ended."""
        watch = ProcessWatch()
        try:
            async with contextlib.AsyncExitStack() as stack:
                async with asyncio.timeout(self.config.startup_timeout_seconds):
                    client = await self._open(stack, watch)
                    listing = await self._list(client)
                self._ready(client, listing)
                await self._serve(client, watch)
        except _Ended as ended:
            return ended.reason
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return self._failure(exc, watch)
        return "the connection ended"

    def _failure(self, exc: Exception, watch: ProcessWatch) -> str:
        """Why a start failed: the process's own end when it ended badly, else the error."""
        if watch.exited.is_set() and (watch.problem or watch.returncode or watch.stderr):
            return watch.describe()
        if isinstance(exc, TimeoutError):
            return f"it did not start within {self.config.startup_timeout_seconds:g} s"
        return describe(exc)

    async def list_once(self) -> Listing:
        """Connect, list the tools and disconnect, within ``startup_timeout_seconds``; raises
        what failed (``openwork mcp test``: nothing is called)."""
        watch = ProcessWatch()
        try:
            async with contextlib.AsyncExitStack() as stack:
                async with asyncio.timeout(self.config.startup_timeout_seconds):
                    client = await self._open(stack, watch)
                    return await self._list(client)
        except Exception as exc:
            raise RuntimeError(self._failure(exc, watch)) from exc

    async def _open(self, stack: contextlib.AsyncExitStack, watch: ProcessWatch) -> Client:
        config = self.config
        if config.transport is Transport.STDIO:
            launch = await asyncio.to_thread(
                stdio_launch, config, sandbox=self._sandbox, daemon_home=self._daemon_home
            )
            transport: Any = stdio_transport(launch, watch)
        else:
            assert config.url is not None
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=self._headers(), timeout=HTTP_TIMEOUT_S)
            )
            transport = streamable_http_client(
                config.url, http_client=http, max_sse_event_size=MAX_MESSAGE_BYTES
            )
        client = Client(
            transport,
            message_handler=self._on_message,
            client_info=mcp.Implementation(name=CLIENT_NAME, version=self._client_version),
            cache=None,
            mode="legacy",  # the initialize handshake every server speaks; ping needs it
        )
        return await stack.enter_async_context(client)

    def _headers(self) -> dict[str, str]:
        headers = dict(self.config.headers)
        env = self.config.bearer_token_env_var
        if env is not None and os.environ.get(env):
            headers["Authorization"] = f"Bearer {os.environ[env]}"
        return headers

    async def _list(self, client: Client) -> Listing:
        tools: list[mcp.Tool] = []
        cursor: str | None = None
        seen: set[str] = set()
        while len(tools) < MAX_LISTED:
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None or cursor in seen:
                break
            seen.add(cursor)
        return listing_of(self.name, tools[:MAX_LISTED], self.config)

    def _ready(self, client: Client, listing: Listing) -> None:
        self._client = client
        self.listing = listing
        self.status, self.reason = ServerStatus.READY, None
        log.info("mcp.server_ready", server=self.name, tools=len(listing.tools))
        self._on_ready(self.name)

    async def _serve(self, client: Client, watch: ProcessWatch) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(PING_INTERVAL_S):
                    await self._wake.wait()
            self._wake.clear()
            if watch.exited.is_set():
                raise _Ended(watch.describe())
            if self._relist:
                self._relist = False
                await self._relisted(client)
                continue
            try:
                async with asyncio.timeout(PING_TIMEOUT_S):
                    await client.send_ping()
            except Exception as exc:
                raise _Ended(f"it stopped answering ({describe(exc)})") from None

    async def _relisted(self, client: Client) -> None:
        try:
            async with asyncio.timeout(self.config.startup_timeout_seconds):
                listing = await self._list(client)
        except Exception as exc:
            raise _Ended(f"listing its tools again failed ({describe(exc)})") from None
        if listing != self.listing:
            self.listing = listing
            log.info("mcp.tools_changed", server=self.name, tools=len(listing.tools))
            self._on_ready(self.name)

    async def _on_message(self, message: object) -> None:
        if isinstance(message, mcp.ToolListChangedNotification):
            self._relist = True
            self._wake.set()

    # -- calls -------------------------------------------------------------------------------
    async def call(
        self, tool: str, arguments: dict[str, Any], progress: ProgressFnT | None
    ) -> mcp.CallToolResult:
        """``ServerUnavailable`` when not connected, ``ConnectionLost`` when the connection
        ended during the call; a JSON-RPC error is ``MCPError``. Cancelling the awaiting task
        sends ``notifications/cancelled`` (the SDK's dispatcher)."""
        client = self._client
        if client is None:
            state = self.status.value + (f": {self.reason}" if self.reason else "")
            raise ServerUnavailable(f"the MCP server {self.name} is not connected ({state})")
        try:
            return await client.call_tool(tool, arguments, progress_callback=progress)
        except MCPError as exc:
            if exc.code == mcp.CONNECTION_CLOSED:
                self._wake.set()
                raise ConnectionLost(f"the MCP server {self.name} closed the connection") from None
            raise
        except (
            httpx2.HTTPError,
            OSError,
            anyio.ClosedResourceError,
            anyio.BrokenResourceError,
        ) as exc:
            self._wake.set()  # check the connection now
            raise ConnectionLost(f"the MCP server {self.name} failed: {describe(exc)}") from None
