"""One server's ``tools/list`` answer as the Tool Surface may use it (issue 27 point 3), pure.

Filtered by the server's ``enabled_tools``/``disabled_tools``, sorted by name, a repeated name
kept once, each description cut at ``MAX_DESCRIPTION_CHARS``, each schema normalised
(``schema.normalized_schema``), at most ``MAX_TOOLS`` tools; what is left out is kept with the
reason, for ``GET /v1/mcp/servers`` and ``openwork mcp test``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import mcp_types as mcp

from openwork_chat_state.messages import JsonObject
from openwork_core.mcp.config import McpServerConfig
from openwork_core.mcp.schema import SchemaTooLarge, normalized_schema

MAX_TOOLS = 128
"""Per server: beyond this the tools are not advertised (the window is the user's)."""
MAX_LISTED = 4096
"""The most tools read from one server's (paginated) listing."""
MAX_DESCRIPTION_CHARS = 2000
MAX_NAME_CHARS = 256


@dataclass(frozen=True, slots=True, kw_only=True)
class ListedTool:
    name: str
    """The server's own name of the tool (what ``tools/call`` is sent)."""
    description: str
    input_schema: JsonObject
    read_only: bool
    """The tool's annotations say ``readOnlyHint: true`` (a hint of an untrusted server: it only
    decides whether the ``annotations`` approval policy asks)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SkippedTool:
    name: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Listing:
    tools: tuple[ListedTool, ...] = ()
    skipped: tuple[SkippedTool, ...] = ()


def _description(server: str, tool: mcp.Tool) -> str:
    text = (tool.description or tool.title or "").strip()
    if not text:
        return f"The {tool.name} tool of the MCP server {server}."
    if len(text) > MAX_DESCRIPTION_CHARS:
        return text[: MAX_DESCRIPTION_CHARS - 1] + "…"
    return text


def listing_of(server: str, tools: Sequence[mcp.Tool], config: McpServerConfig) -> Listing:
    kept: list[ListedTool] = []
    skipped: list[SkippedTool] = []
    seen: set[str] = set()
    for tool in sorted(tools, key=lambda t: t.name):
        name = tool.name
        if not config.allows(name):
            continue
        if not name.strip() or len(name) > MAX_NAME_CHARS:
            skipped.append(SkippedTool(name=name[:80], reason="a blank or over-long name"))
            continue
        if name in seen:
            skipped.append(SkippedTool(name=name, reason="listed twice"))
            continue
        seen.add(name)
        if len(kept) >= MAX_TOOLS:
            skipped.append(SkippedTool(name=name, reason=f"over {MAX_TOOLS} tools"))
            continue
        try:
            schema = normalized_schema(tool.input_schema)
        except SchemaTooLarge as exc:
            skipped.append(SkippedTool(name=name, reason=str(exc)))
            continue
        annotations = tool.annotations
        kept.append(
            ListedTool(
                name=name,
                description=_description(server, tool),
                input_schema=schema,
                read_only=annotations is not None and annotations.read_only_hint is True,
            )
        )
    return Listing(tools=tuple(kept), skipped=tuple(skipped))
