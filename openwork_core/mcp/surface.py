"""What one session load takes from the MCP servers (issue 27 point 3), without the SDK.

``McpSurface``: the tools of every server that was ``ready`` then, sorted by their model-visible
names, and each server's share for the context inspection (its status then, its reason, its
tools' tokens). It does not change for the session's life but at a turn boundary after the
servers' ``generation`` moved (``TurnToolset.refreshed``)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Protocol

from openwork_chat_state.messages import ToolDefinition
from openwork_core.context.wire import json_size, tokens_for_bytes
from openwork_tools.definition import AnyTool


class SurfaceTool(AnyTool, Protocol):
    @property
    def server(self) -> str: ...


class SurfaceSource(Protocol):
    @property
    def generation(self) -> int: ...

    def surface(self) -> McpSurface: ...


class ServerStatus(enum.StrEnum):
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    DISABLED = "disabled"


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerShare:
    """One server at a session's load: its status then, and what its tools cost."""

    name: str
    status: ServerStatus
    reason: str | None
    tools: int
    tokens: int


@dataclass(frozen=True, slots=True, kw_only=True)
class McpSurface:
    generation: int
    tools: tuple[SurfaceTool, ...]
    servers: tuple[ServerShare, ...]
    source: SurfaceSource | None = field(default=None, compare=False)

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.servers)


def tool_tokens(definition: ToolDefinition) -> int:
    return tokens_for_bytes(json_size(definition))


def empty_surface(source: SurfaceSource) -> McpSurface:
    return McpSurface(generation=source.generation, tools=(), servers=(), source=source)
