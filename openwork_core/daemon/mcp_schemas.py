"""Bodies of the MCP server routes (issue 27 point 1; docs/api.md "MCP servers"). The PUT body is
``McpServerConfig`` itself; what is answered never holds a secret value (``env`` and ``headers``
are listed by name)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import JsonValue

from openwork_core.body import Body
from openwork_core.mcp.config import ServerSource, Transport
from openwork_core.mcp.surface import ServerStatus

if TYPE_CHECKING:  # the manager imports the SDK: only once a server exists
    from openwork_core.mcp.manager import ServerView


class McpToolBody(Body):
    name: str
    """The server's own name of the tool."""
    advertised_as: str
    """Its name in the Tool Surface (``mcp__<server>__<tool>``, sanitised and bounded)."""
    tokens: int
    """Its definition's cost in the window (⌈compact JSON bytes / 4⌉)."""


class McpSkippedToolBody(Body):
    name: str
    reason: str


class McpServerBody(Body):
    name: str
    source: ServerSource
    status: ServerStatus
    reason: str | None
    transport: Transport
    tools: list[McpToolBody]
    skipped: list[McpSkippedToolBody]
    config: dict[str, JsonValue]
    """The server's settings, ``env`` and ``headers`` as lists of names."""


class McpServerList(Body):
    servers: list[McpServerBody]


def server_body(view: ServerView) -> McpServerBody:
    config: dict[str, JsonValue] = view.config.model_dump(
        mode="json", exclude={"env", "headers"}, exclude_defaults=True
    )
    env: list[JsonValue] = [*sorted(view.config.env)]
    headers: list[JsonValue] = [*sorted(view.config.headers)]
    config["env"], config["headers"] = env, headers
    return McpServerBody(
        name=view.name,
        source=view.source,
        status=view.status,
        reason=view.reason,
        transport=view.config.transport,
        tools=[
            McpToolBody(name=t.name, advertised_as=t.advertised_as, tokens=t.tokens)
            for t in view.tools
        ],
        skipped=[McpSkippedToolBody(name=n, reason=r) for n, r in view.skipped],
        config=config,
    )
