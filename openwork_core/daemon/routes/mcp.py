"""MCP server routes (issue 27 point 1; docs/api.md "MCP servers"): ``GET /v1/mcp/servers``,
``PUT`` and ``DELETE /v1/mcp/servers/{name}``, ``POST /v1/mcp/servers/{name}/test``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter, Response

from openwork_core.daemon.errors import InvalidBody
from openwork_core.daemon.mcp_schemas import McpServerBody, McpServerList, server_body
from openwork_core.daemon.validation import StorableStr
from openwork_core.mcp.config import McpServerConfig, server_name_problem

if TYPE_CHECKING:
    from openwork_core.service import OpenWorkCore


class InvalidServerName(InvalidBody):
    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"invalid MCP server name {name[:80]!r}: {problem}")


def _checked(name: str) -> str:
    problem = server_name_problem(name)
    if problem is not None:
        raise InvalidServerName(name, problem)
    return name


def mcp_routes(router: APIRouter, core: OpenWorkCore) -> None:

    @router.get("/v1/mcp/servers", response_model=McpServerList, tags=["mcp"])
    async def list_mcp_servers() -> McpServerList:
        return McpServerList(servers=[server_body(v) for v in await core.mcp.views()])

    @router.put("/v1/mcp/servers/{name}", response_model=McpServerBody, tags=["mcp"])
    async def put_mcp_server(name: StorableStr, body: McpServerConfig) -> McpServerBody:
        """Stored without secrets (``env`` and ``headers`` values go to the 0600 key file); the
        server is (re)started in the background; loaded sessions see it at their next turn."""
        return server_body(await core.mcp.put(_checked(name), body))

    @router.delete("/v1/mcp/servers/{name}", status_code=204, tags=["mcp"])
    async def delete_mcp_server(name: StorableStr) -> Response:
        await core.mcp.delete(_checked(name))
        return Response(status_code=204)

    @router.post("/v1/mcp/servers/{name}/test", response_model=McpServerBody, tags=["mcp"])
    async def test_mcp_server(name: StorableStr) -> McpServerBody:
        """Start the server apart from the daemon's own client, list its tools with their token
        cost, stop it; no tool is called."""
        return server_body(await core.mcp.test(_checked(name)))
