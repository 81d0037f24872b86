"""TurnToolset: the session's Tool Surface (context-window.md §5, update-plan.md §3, tools.md §3).

The registry's ``FinalizedToolset`` first, in its order; then ``conversation_history`` when the
agent registers it (compaction.md §8.4); then the control tools of the surface; then the MCP tools
of the session's load, sorted by name (issue 27, docs/mcp.md), which resolve to ``Registered``
(the same ``FinalizedToolset``, extended, dispatches them). A root session advertises
``update_plan`` and then the five sub-agent control tools in ``AGENT_TOOL_NAMES`` order
(multi-agent.md §5), which resolve to ``Agent``; a sub-agent advertises no control tool and cannot
dispatch one. ``_control_entries`` is the one place that lists a surface's tools.

Built once at session load and reused by every Turn; ``refreshed`` (at a turn boundary only)
rebuilds the MCP part after the servers changed. ``definitions`` and ``resolve`` read the same
ordered selection, so every advertised name resolves and nothing else does.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar, Literal, TypeAlias, assert_never

from pydantic import BaseModel, ConfigDict, Field

from openwork_chat_state.error_root import OpenWorkError
from openwork_chat_state.messages import JsonObject, ToolDefinition
from openwork_core.agents.control import DEFAULT_MAX_ACTIVE_SUB_AGENT_TURNS
from openwork_core.agents.tools import (
    AgentToolName,
    agent_tool_definition,
    sub_agent_prompt_rules,
)
from openwork_core.ids import CompactionId, SessionId
from openwork_core.mcp.surface import McpSurface
from openwork_core.plan.tool import UPDATE_PLAN_PROMPT_RULES, update_plan_definition
from openwork_tools.registry import FinalizedToolset, tool_not_found_text
from openwork_tools.schema import parse_input

# -- errors ----------------------------------------------------------------------------------


class TurnToolsetError(OpenWorkError):
    """The Tool Surface cannot be built; the session must not load."""

    code: ClassVar[str] = "tool_surface_invalid"


class NameCollision(TurnToolsetError):
    """A Core-added tool has the name of a registry tool (or of another Core-added tool)."""

    code = "tool_name_collision"

    def __init__(self, name: str) -> None:
        super().__init__(f"tool name {name!r} is both a control tool and a registry tool")
        self.name = name


class DefinitionMismatch(TurnToolsetError):
    """A registry definition does not carry the id it is dispatched under."""

    code = "tool_definition_mismatch"

    def __init__(self, name: str, advertised: str) -> None:
        super().__init__(f"registry tool {name!r} is advertised as {advertised!r}")
        self.name = name


# -- surfaces --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RootSurface:
    """A root session: ``update_plan`` and the five sub-agent control tools, whose descriptions
    and prompt rules state ``max_active_turns`` (``AgentControl.max_active_turns``)."""

    max_active_turns: int = DEFAULT_MAX_ACTIVE_SUB_AGENT_TURNS
    kind: Literal["root"] = "root"


@dataclass(frozen=True, slots=True)
class SubAgentSurface:
    """A sub-agent session: no control tool is advertised or dispatchable."""

    kind: Literal["sub_agent"] = "sub_agent"


ControlToolSurface: TypeAlias = RootSurface | SubAgentSurface


def control_surface(
    parent_session_id: SessionId | None, max_active_turns: int = DEFAULT_MAX_ACTIVE_SUB_AGENT_TURNS
) -> ControlToolSurface:
    """Root for a session without a parent, sub-agent otherwise."""
    if parent_session_id is None:
        return RootSurface(max_active_turns=max_active_turns)
    return SubAgentSurface()


# -- resolution ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UpdatePlan:
    """Parse with ``openwork_core.plan.tool.read_update_plan``; commit with
    ``SessionStorage.append`` (a ``StepWrite`` with the plan)."""

    kind: Literal["update_plan"] = "update_plan"


@dataclass(frozen=True, slots=True)
class ConversationHistory:
    """Parse with ``parse_conversation_history``; read the compaction transcript."""

    kind: Literal["conversation_history"] = "conversation_history"


@dataclass(frozen=True, slots=True)
class Agent:
    """A sub-agent control tool (multi-agent.md §5): ``parse_agent_tool_args`` then the session's
    ``AgentHost`` / mailbox; executed without the sandbox, trace source ``control_tool``."""

    tool: AgentToolName
    kind: Literal["agent"] = "agent"


@dataclass(frozen=True, slots=True)
class Registered:
    """A registry tool: ``registry_tools.prepare`` / ``authorize`` / ``registry_tools.call``."""

    name: str
    kind: Literal["registered"] = "registered"


@dataclass(frozen=True, slots=True)
class NotFound:
    """Not advertised: the ``tool_not_found`` result, Turn continues."""

    name: str
    kind: Literal["not_found"] = "not_found"

    @property
    def text(self) -> str:
        return tool_not_found_text(self.name)


ResolvedTurnTool: TypeAlias = UpdatePlan | ConversationHistory | Agent | Registered | NotFound

# -- conversation_history ----------------------------------------------------------------------

CONVERSATION_HISTORY_TOOL_NAME = "conversation_history"
CONVERSATION_HISTORY_DESCRIPTION = (
    "Read an exact, paginated slice of raw messages covered by a conversation compaction "
    "checkpoint. Omit compactionId to use the latest checkpoint, then follow nextAfterSequence "
    "while hasMore is true. Use this only when the compacted summary lacks an exact historical "
    "detail; it never replays tools or changes session state."
)
TRANSCRIPT_DEFAULT_LIMIT = 20
TRANSCRIPT_MAX_LIMIT = 50
TRANSCRIPT_DEFAULT_AFTER_SEQUENCE = 0


def conversation_history_parameters() -> JsonObject:
    """``ConversationTranscriptQuery{compactionId?, afterSequence?, limit?}`` (a fresh object)."""
    return {
        "type": "object",
        "properties": {
            "compactionId": {
                "type": "string",
                "description": "The compaction checkpoint to read; omit for the latest one.",
            },
            "afterSequence": {
                "type": "integer",
                "minimum": 0,
                "description": "Return messages after this sequence; default 0.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": TRANSCRIPT_MAX_LIMIT,
                "description": f"At most this many messages; default {TRANSCRIPT_DEFAULT_LIMIT}.",
            },
        },
        "additionalProperties": False,
    }


@functools.cache
def conversation_history_definition() -> ToolDefinition:
    """Built once per process."""
    return ToolDefinition(
        name=CONVERSATION_HISTORY_TOOL_NAME,
        description=CONVERSATION_HISTORY_DESCRIPTION,
        parameters=conversation_history_parameters(),
    )


class ConversationHistoryArgs(BaseModel):
    """The model's query; ``None`` means omitted (``null`` is read as omitted too)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    compaction_id: CompactionId | None = Field(default=None, alias="compactionId")
    after_sequence: int | None = Field(default=None, alias="afterSequence", ge=0)
    limit: int | None = Field(default=None, ge=1, le=TRANSCRIPT_MAX_LIMIT)

    @property
    def effective_after_sequence(self) -> int:
        if self.after_sequence is None:
            return TRANSCRIPT_DEFAULT_AFTER_SEQUENCE
        return self.after_sequence

    @property
    def effective_limit(self) -> int:
        return TRANSCRIPT_DEFAULT_LIMIT if self.limit is None else self.limit


def parse_conversation_history(input_json: str) -> ConversationHistoryArgs | str:
    """The typed query, or the model-visible ``invalid tool input: …`` text (tools.md §2)."""
    return parse_input(ConversationHistoryArgs, input_json)


# -- the toolset -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Entry:
    definition: ToolDefinition
    resolved: ResolvedTurnTool


def _control_entries(surface: ControlToolSurface) -> Iterator[_Entry]:
    match surface:
        case RootSurface(max_active_turns=limit):
            yield _Entry(update_plan_definition(), UpdatePlan())
            for tool in AgentToolName:  # AGENT_TOOL_NAMES order
                yield _Entry(agent_tool_definition(tool, limit), Agent(tool))
        case SubAgentSurface():
            return
        case _:
            assert_never(surface)


class TurnToolset:
    """Immutable after ``new``; the advertised definitions and ``resolve`` share one selection."""

    __slots__ = (
        "_base",
        "_by_name",
        "_conversation_history",
        "_definitions",
        "_entries",
        "_mcp",
        "_registry_tools",
        "_surface",
    )

    def __init__(
        self,
        registry_tools: FinalizedToolset,
        surface: ControlToolSurface,
        entries: tuple[_Entry, ...],
        *,
        base: FinalizedToolset | None = None,
        conversation_history: bool = False,
        mcp: McpSurface | None = None,
    ) -> None:
        self._registry_tools = registry_tools
        self._base = registry_tools if base is None else base
        self._surface = surface
        self._entries = entries
        self._conversation_history = conversation_history
        self._mcp = mcp
        self._by_name = {e.definition.name: e.resolved for e in entries}
        self._definitions = tuple(e.definition for e in entries)

    @staticmethod
    def new(
        registry_tools: FinalizedToolset,
        surface: ControlToolSurface,
        *,
        conversation_history: bool,
        mcp: McpSurface | None = None,
    ) -> TurnToolset:
        """Raises ``NameCollision`` when a Core-added tool reuses a taken name."""
        entries: list[_Entry] = []
        for name, definition in zip(registry_tools.names, registry_tools.definitions, strict=True):
            if definition.name != name:
                raise DefinitionMismatch(name, definition.name)
            entries.append(_Entry(definition, Registered(name)))
        core: list[_Entry] = []
        if conversation_history:
            core.append(_Entry(conversation_history_definition(), ConversationHistory()))
        core.extend(_control_entries(surface))
        mcp_tools = () if mcp is None else mcp.tools
        available = registry_tools.session.sandbox.available
        core.extend(
            _Entry(t.definition(sandbox_available=available), Registered(t.tool_id))
            for t in mcp_tools
        )
        taken = {e.definition.name for e in entries}
        for entry in core:
            if entry.definition.name in taken:
                raise NameCollision(entry.definition.name)
            taken.add(entry.definition.name)
            entries.append(entry)
        dispatch = registry_tools.extended(mcp_tools) if mcp_tools else registry_tools
        return TurnToolset(
            dispatch,
            surface,
            tuple(entries),
            base=registry_tools,
            conversation_history=conversation_history,
            mcp=mcp,
        )

    def refreshed(self) -> TurnToolset:
        """At a turn boundary: this toolset, unless the MCP servers changed since it was built
        (their ``generation``); then the toolset of a new load — with this one's very
        definitions when they are the same bytes (the prompt cache's fast path keeps them)."""
        mcp = self._mcp
        source = None if mcp is None else mcp.source
        if mcp is None or source is None or source.generation == mcp.generation:
            return self
        fresh = TurnToolset.new(
            self._base,
            self._surface,
            conversation_history=self._conversation_history,
            mcp=source.surface(),
        )
        if fresh._definitions == self._definitions:
            fresh._definitions = self._definitions
        return fresh

    @property
    def mcp(self) -> McpSurface | None:
        """What the MCP servers contributed at this toolset's load (None: no server)."""
        return self._mcp

    @property
    def registry_tools(self) -> FinalizedToolset:
        """The tools dispatched by ``Registered`` names: the registry's and the MCP tools."""
        return self._registry_tools

    @property
    def surface(self) -> ControlToolSurface:
        return self._surface

    @property
    def definitions(self) -> tuple[ToolDefinition, ...]:
        """Registry tools, then ``conversation_history``, then the control tools, then the MCP
        tools (one tuple, the same object for every call)."""
        return self._definitions

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(e.definition.name for e in self._entries)

    def resolve(self, name: str) -> ResolvedTurnTool:
        """Once at the start of a tool call; a name that is not advertised is ``NotFound``."""
        resolved = self._by_name.get(name)
        return NotFound(name) if resolved is None else resolved

    def system_prompt(self) -> str:
        """Appended after the agent system prompt (also for context inspection): the
        ``update_plan`` rules exactly when it is advertised, then (blank line) the sub-agent
        delegation rules exactly when the control tools are advertised; else empty."""
        parts: list[str] = []
        if any(isinstance(e.resolved, UpdatePlan) for e in self._entries):
            parts.append(UPDATE_PLAN_PROMPT_RULES)
        if any(isinstance(e.resolved, Agent) for e in self._entries):
            surface = self._surface
            assert isinstance(surface, RootSurface)
            parts.append(sub_agent_prompt_rules(surface.max_active_turns))
        return "\n\n".join(parts)
