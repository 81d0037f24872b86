"""TurnToolset: the session's Tool Surface — the FinalizedToolset plus Core control tools on root
sessions (context-window.md §5). Built once at session load; definitions and dispatch come from
the same selection."""

from __future__ import annotations

from dataclasses import dataclass

from openwork_chat_state.messages import ToolDefinition
from openwork_tools import FinalizedToolset


class TurnToolsetError(Exception):
    code = "tool_surface_invalid"


@dataclass(frozen=True, slots=True)
class TurnToolset:
    registry_tools: FinalizedToolset

    @staticmethod
    def new(registry_tools: FinalizedToolset) -> TurnToolset:
        return TurnToolset(registry_tools)

    @property
    def definitions(self) -> tuple[ToolDefinition, ...]:
        return self.registry_tools.definitions

    @property
    def names(self) -> tuple[str, ...]:
        return self.registry_tools.names

    def system_prompt(self) -> str:
        """The rules the advertised control tools need; empty when none is advertised."""
        return ""
