"""The budget estimate of one request (context-window.md §7.1).

Each region is measured on its own as ⌈bytes of the compact JSON of its array / 4⌉:

- System Context: ``[{"key": …, "content": …}, …]`` (the parts, in order);
- Conversation: the request's messages after the System messages;
- Tool Surface: the tool definitions ``[{"name", "description", "parameters"}, …]``.

``estimated_input_tokens`` is their sum and ``reserved_output_tokens`` the model's max output. The
estimate measures the request actually submitted (after prune, projection and normalization) and
never changes it. Tool Result artifacts are never inside a ``Message``, so they never count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openwork_chat_state.messages import ToolDefinition
from openwork_core.context.builder import ResolvedSystemContext
from openwork_core.context.wire import json_size, tokens_for_bytes


@dataclass(frozen=True, slots=True)
class ContextBudgetEstimate:
    """Field order is the inspection's wire shape (daemon-api.md §3 ``budget``)."""

    system_context_tokens: int
    conversation_tokens: int
    tool_surface_tokens: int
    estimated_input_tokens: int
    reserved_output_tokens: int

    @classmethod
    def from_regions(
        cls,
        *,
        system_context_tokens: int,
        conversation_tokens: int,
        tool_surface_tokens: int,
        reserved_output_tokens: int,
    ) -> ContextBudgetEstimate:
        return cls(
            system_context_tokens=system_context_tokens,
            conversation_tokens=conversation_tokens,
            tool_surface_tokens=tool_surface_tokens,
            estimated_input_tokens=system_context_tokens
            + conversation_tokens
            + tool_surface_tokens,
            reserved_output_tokens=reserved_output_tokens,
        )


def estimate_system_context_tokens(system: ResolvedSystemContext) -> int:
    return tokens_for_bytes(json_size(system.parts))


def estimate_tool_surface_tokens(tools: Sequence[ToolDefinition]) -> int:
    return tokens_for_bytes(json_size(tuple(tools)))
