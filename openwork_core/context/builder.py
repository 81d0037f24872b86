"""The System Context: exactly one part, ``core/agent-system`` (context-window.md §2).

The part is the Agent system prompt followed — only when the tool surface contributes rules — by a
blank line and the tool-surface rules (``TurnToolset.system_prompt``). It never reads the
Conversation or the workspace, so for the same Agent and tool surface it is byte-for-byte the same
for the lifetime of the Actor. Validation happens at assembly (``engine``), not here.
"""

from __future__ import annotations

from dataclasses import dataclass

AGENT_SYSTEM_KEY = "core/agent-system"
PROMPT_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class SystemContextPart:
    """One System Context part; field order is the inspection's shape ``{"key", "content"}``."""

    key: str
    content: str


@dataclass(frozen=True, slots=True)
class ResolvedSystemContext:
    """The materialized System Context of one Turn (or of one manual-compaction summary)."""

    parts: tuple[SystemContextPart, ...]


class SystemContextBuilder:
    """Resolves the System Context; stateless."""

    def build(
        self, agent_system_prompt: str, tool_surface_prompt: str = ""
    ) -> ResolvedSystemContext:
        """The single ``core/agent-system`` part (manual compaction: the agent prompt alone)."""
        content = agent_system_prompt
        if tool_surface_prompt:
            content = f"{agent_system_prompt}{PROMPT_SEPARATOR}{tool_surface_prompt}"
        part = SystemContextPart(key=AGENT_SYSTEM_KEY, content=content)
        return ResolvedSystemContext(parts=(part,))
