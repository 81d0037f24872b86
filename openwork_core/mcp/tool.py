"""MCP tools in the Tool Surface (issue 27 points 3 and 4; docs/mcp.md).

``McpTool`` is a listed tool as a registry tool (``openwork_tools.definition.AnyTool``): the same
``FinalizedToolset`` that dispatches the built-in tools dispatches it, so its result gets the same
32,000-byte cap and spill file, and a bug in it is a result. ``prepare`` gives the approval gate
the facts of a call that asks first; ``dispatch`` sends ``tools/call`` with the server's
``tool_timeout_seconds`` and the turn's cancellation (both cancel the request: the SDK sends
``notifications/cancelled``), forwards progress notifications as progress messages, and makes
every failure a result.

``build_surface`` makes the ``McpSurface`` of one session load (``surface.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Protocol

import orjson
from mcp.shared.exceptions import MCPError

from openwork_chat_state.messages import JsonObject, ToolDefinition
from openwork_core.mcp.config import ApprovalPolicy
from openwork_core.mcp.connection import (
    ConnectionLost,
    McpConnection,
    ServerUnavailable,
    describe,
)
from openwork_core.mcp.listing import ListedTool
from openwork_core.mcp.names import qualified_names
from openwork_core.mcp.results import tool_result
from openwork_core.mcp.surface import (
    McpSurface,
    ServerShare,
    ServerStatus,
    SurfaceSource,
    tool_tokens,
)
from openwork_tools.context import MessageProgress, ToolCallContext, ToolSessionContext
from openwork_tools.definition import RiskHint
from openwork_tools.policy import Actor
from openwork_tools.prepared import ExternalCall, PreparedCall
from openwork_tools.results import ToolErrorCode, ToolResult, ToolStatus


class ConnectionLookup(Protocol):
    def connection(self, server: str) -> McpConnection | None: ...


def asks(policy: ApprovalPolicy, listed: ListedTool) -> bool:
    """Whether a call of ``listed`` shows the approval card first."""
    return policy is ApprovalPolicy.ALWAYS or (
        policy is ApprovalPolicy.ANNOTATIONS and not listed.read_only
    )


def _arguments(input_json: str) -> JsonObject | None:
    try:
        value = orjson.loads(input_json or "{}")
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _progress_text(progress: float, total: float | None, message: str | None) -> str:
    count = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
    return f"{count} {message}" if message else count


class McpTool:
    """One listed tool of one server, dispatched by name through its server's live connection
    (a server restarted or reconfigured since the session loaded is the one called)."""

    def __init__(
        self, *, tool_id: str, server: str, listed: ListedTool, ask: bool, lookup: ConnectionLookup
    ) -> None:
        self._definition = ToolDefinition(
            name=tool_id, description=listed.description, parameters=listed.input_schema
        )
        self.server = server
        self.mcp_name = listed.name
        self._ask = ask
        self._risk = (
            RiskHint.READ_ONLY if listed.read_only and not ask else RiskHint.PROCESS_EXECUTION
        )
        self._lookup = lookup

    @property
    def tool_id(self) -> str:
        return self._definition.name

    @property
    def description(self) -> str:
        return self._definition.description

    @property
    def risk(self) -> RiskHint:
        return self._risk

    def definition(self, *, sandbox_available: bool) -> ToolDefinition:
        return self._definition

    def prepare(self, session: ToolSessionContext, input_json: str) -> PreparedCall | None:
        arguments = _arguments(input_json)
        if not self._ask or arguments is None:
            return None
        external = ExternalCall(server=self.server, tool=self.mcp_name, arguments=arguments)
        return PreparedCall(actor=Actor.PROCESS, external=external)

    async def dispatch(
        self, session: ToolSessionContext, call: ToolCallContext, input_json: str
    ) -> ToolResult:
        arguments = _arguments(input_json)
        if arguments is None:
            return ToolResult.fail(
                ToolErrorCode.INVALID_ARGUMENTS, "invalid tool input: not a JSON object"
            )
        connection = self._lookup.connection(self.server)
        if connection is None:
            return ToolResult.fail(
                ToolErrorCode.EXECUTION_FAILED,
                f"the MCP server {self.server} is no longer configured",
            )
        return await self._call(connection, arguments, call)

    async def _call(
        self, connection: McpConnection, arguments: dict[str, Any], call: ToolCallContext
    ) -> ToolResult:
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            call.send_progress(MessageProgress(message=_progress_text(progress, total, message)))

        timeout = connection.config.tool_timeout_seconds
        request = asyncio.get_running_loop().create_task(
            connection.call(self.mcp_name, arguments, on_progress)
        )
        cancelled = asyncio.get_running_loop().create_task(call.cancel.wait())
        try:
            await asyncio.wait({request, cancelled}, timeout=timeout, return_when="FIRST_COMPLETED")
        finally:
            cancelled.cancel()
            if not request.done():
                request.cancel()  # the SDK sends notifications/cancelled
            await asyncio.gather(request, cancelled, return_exceptions=True)
        if request.cancelled():
            if call.cancel.is_set():
                return ToolResult.fail(
                    ToolErrorCode.CANCELLED, "cancelled", status=ToolStatus.CANCELLED
                )
            return ToolResult.fail(
                ToolErrorCode.TIMEOUT,
                f"the MCP tool {self.mcp_name} of {self.server} did not answer within "
                f"{timeout:g} s; the request was cancelled",
                retryable=True,
            )
        return self._outcome(request)

    def _outcome(self, request: asyncio.Task[Any]) -> ToolResult:
        where = f"the MCP tool {self.mcp_name} of {self.server}"
        try:
            return tool_result(request.result())
        except ServerUnavailable as exc:
            return ToolResult.fail(ToolErrorCode.EXECUTION_FAILED, str(exc), retryable=True)
        except ConnectionLost as exc:
            return ToolResult.fail(
                ToolErrorCode.OUTCOME_UNKNOWN,
                f"{exc} during the call of {self.mcp_name}: whether it acted is unknown",
                status=ToolStatus.OUTCOME_UNKNOWN,
            )
        except MCPError as exc:
            return ToolResult.fail(
                ToolErrorCode.EXECUTION_FAILED, f"{where} failed: {exc.message[:2000]}"
            )
        except Exception as exc:  # a malformed answer, a transport error: a result
            return ToolResult.fail(
                ToolErrorCode.EXECUTION_FAILED, f"{where} failed: {describe(exc)}"
            )


def build_surface(
    generation: int,
    connections: Mapping[str, McpConnection],
    lookup: ConnectionLookup,
    source: SurfaceSource | None = None,
) -> McpSurface:
    """The tools of the servers that are ready now, named (``names.qualified_names``) and sorted."""
    ready = {
        name: c
        for name, c in connections.items()
        if c.status is ServerStatus.READY and c.listing is not None
    }
    pairs = [(name, t.name) for name, c in ready.items() for t in c.listing.tools]  # type: ignore[union-attr]
    names = qualified_names(pairs)
    tools: list[McpTool] = []
    for server, connection in ready.items():
        assert connection.listing is not None
        for listed in connection.listing.tools:
            tools.append(
                McpTool(
                    tool_id=names[(server, listed.name)],
                    server=server,
                    listed=listed,
                    ask=asks(connection.config.approval, listed),
                    lookup=lookup,
                )
            )
    tools.sort(key=lambda t: t.tool_id)
    shares = []
    for server, connection in sorted(connections.items()):
        mine = [t for t in tools if t.server == server]
        shares.append(
            ServerShare(
                name=server,
                status=connection.status,
                reason=connection.reason,
                tools=len(mine),
                tokens=sum(tool_tokens(t.definition(sandbox_available=True)) for t in mine),
            )
        )
    return McpSurface(
        generation=generation, tools=tuple(tools), servers=tuple(shares), source=source
    )
