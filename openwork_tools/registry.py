"""Tool registry and the finalized, immutable toolset of one session (tools.md §3, §8)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from openwork_chat_state.messages import ToolDefinition
from openwork_tools.context import ToolCallContext, ToolSessionContext
from openwork_tools.definition import AnyTool, RiskHint
from openwork_tools.errors import (
    BlankToolDescription,
    BlankToolId,
    DuplicateToolRegistration,
    DuplicateToolSelection,
    UnknownToolSelection,
)
from openwork_tools.prepared import PreparedCall
from openwork_tools.results import RESULT_TEXT_LIMIT, ToolErrorCode, ToolResult
from openwork_tools.spill import fallback_cut


def tool_not_found_text(name: str) -> str:
    """The model-visible text for a name outside the selection (tools.md §11: our choice)."""
    return f"tool not found: {name}"


@dataclass(frozen=True, slots=True)
class ToolsetConfig:
    """The agent's ordered selection of tool ids."""

    tool_ids: tuple[str, ...]


class ToolRegistry:
    """Known tools by id. ``register`` validates; ``finalize`` builds one session's toolset."""

    def __init__(self, tools: Iterable[AnyTool] = ()) -> None:
        self._tools: dict[str, AnyTool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: AnyTool) -> None:
        if not tool.tool_id.strip():
            raise BlankToolId("a tool id must not be blank")
        if not tool.description.strip():
            raise BlankToolDescription(f"tool {tool.tool_id!r} has a blank description")
        if tool.tool_id in self._tools:
            raise DuplicateToolRegistration(f"tool {tool.tool_id!r} is already registered")
        self._tools[tool.tool_id] = tool

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def definitions(self, *, sandbox_available: bool) -> tuple[ToolDefinition, ...]:
        """Every registered tool's definition, as a session with this sandbox gets it (each is
        built once per process: the daemon's warm-up builds them before the first session)."""
        return tuple(
            t.definition(sandbox_available=sandbox_available) for t in self._tools.values()
        )

    def finalize(self, config: ToolsetConfig, session: ToolSessionContext) -> FinalizedToolset:
        selected: dict[str, AnyTool] = {}
        for tool_id in config.tool_ids:
            if tool_id in selected:
                raise DuplicateToolSelection(f"tool {tool_id!r} is selected twice")
            tool = self._tools.get(tool_id)
            if tool is None:
                raise UnknownToolSelection(f"tool {tool_id!r} is not registered")
            selected[tool_id] = tool
        return FinalizedToolset(selected, session)


class FinalizedToolset:
    """Definitions and dispatch from one selection; immutable after finalize."""

    __slots__ = ("_definitions", "_session", "_tools")

    def __init__(self, tools: Mapping[str, AnyTool], session: ToolSessionContext) -> None:
        self._tools: Mapping[str, AnyTool] = MappingProxyType(dict(tools))
        self._session = session
        available = session.sandbox.available
        self._definitions = tuple(
            t.definition(sandbox_available=available) for t in self._tools.values()
        )

    @property
    def definitions(self) -> tuple[ToolDefinition, ...]:
        return self._definitions

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def extended(self, tools: Iterable[AnyTool]) -> FinalizedToolset:
        """This selection plus ``tools`` (Core's MCP tools), dispatched the same way."""
        added = dict(self._tools)
        for tool in tools:
            if tool.tool_id in added:
                raise DuplicateToolSelection(f"tool {tool.tool_id!r} is selected twice")
            added[tool.tool_id] = tool
        return FinalizedToolset(added, self._session)

    @property
    def session(self) -> ToolSessionContext:
        return self._session

    def risk(self, name: str) -> RiskHint | None:
        """The selected tool's risk hint; ``None`` for a name not selected."""
        tool = self._tools.get(name)
        return None if tool is None else tool.risk

    def prepare(self, name: str, input_json: str) -> PreparedCall | None:
        """Pre-execution facts; None for read-only tools, unknown names and unparsable input."""
        tool = self._tools.get(name)
        return None if tool is None else tool.prepare(self._session, input_json)

    async def call(self, name: str, input_json: str, call: ToolCallContext) -> ToolResult:
        """Run one selected tool; every text <= 32,000 bytes. A tool reports its failures as
        results; an exception that escapes one (a bug, an ``OSError`` from a race) reaches the
        caller, whose one boundary makes it the call's error result (Core's ``tool_dispatch``,
        issue 22 point 7)."""
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult.fail(ToolErrorCode.TOOL_NOT_FOUND, tool_not_found_text(name))
        result = await tool.dispatch(self._session, call, input_json)
        text = result.text
        if (
            len(text) * 4 > RESULT_TEXT_LIMIT
            and len(text.encode(errors="surrogatepass")) > RESULT_TEXT_LIMIT
        ):
            cut = await asyncio.to_thread(fallback_cut, text, self._session.spill_dir, call.call_id)
            result = result.with_text(cut)
        return result
