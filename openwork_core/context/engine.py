"""Request assembly: ``ContextEngine.prepare`` (context-window.md §6).

Deterministic and pure: on a copy of the Conversation it prunes, projects and normalizes
(§4.2, in one pass of ``item_forms.normalized_conversation`` over the cached per-item forms),
validates the System Context and the absence of System messages, measures the budget from the
cached sizes, and builds the provider-neutral ``ModelRequest``: one System message per part, then
the Conversation; tool definitions in ``tools``; ``max_output_tokens`` from the capabilities;
``temperature``, ``top_p`` and ``thinking`` unset. It reads no file, calls no provider and mutates
none of its inputs (``item._memo`` caches aside). Same inputs → byte-identical request.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from openwork_chat_state.item import ConversationItem
from openwork_chat_state.messages import Message, Role, TextBlock, ToolDefinition
from openwork_chat_state.view import ConversationContextView
from openwork_core.context.budget import (
    ContextBudgetEstimate,
    estimate_system_context_tokens,
    estimate_tool_surface_tokens,
)
from openwork_core.context.builder import ResolvedSystemContext
from openwork_core.context.errors import SystemContextInvalid, SystemMessageInConversation
from openwork_core.context.item_forms import normalized_conversation
from openwork_core.context.item_limits import check_system_context_part
from openwork_core.context.normalize import ProjectionSummary
from openwork_core.context.provenance import (
    SYNTHESIZED_RESULT_PROVENANCE,
    Provenance,
    provenance_of,
)
from openwork_core.context.wire import array_size, tokens_for_bytes
from openwork_core.models.capabilities import ModelCapabilities
from openwork_core.models.port import ModelRequest


@dataclass(frozen=True, slots=True)
class PreparedModelCall:
    """The request together with its budget, what the copy changed, and each Conversation
    message's origin (``provenance[i]`` belongs to ``conversation[i]``)."""

    request: ModelRequest
    budget: ContextBudgetEstimate
    projection: ProjectionSummary
    sources: tuple[ConversationItem | None, ...]
    """The item each Conversation message came from (``None``: a result synthesized by
    normalization); ``provenance`` is derived from it when asked for (inspection only)."""
    conversation: tuple[Message, ...]
    system: ResolvedSystemContext
    conversation_sizes: tuple[int, ...] = ()
    """Each Conversation message's JSON size as measured (``conversation_sizes[i]`` belongs to
    ``conversation[i]``): lets the cache diagnostics compare calls without serializing again."""

    @property
    def provenance(self) -> tuple[Provenance, ...]:
        """``provenance[i]`` belongs to ``conversation[i]``."""
        return tuple(
            SYNTHESIZED_RESULT_PROVENANCE if item is None else provenance_of(item)
            for item in self.sources
        )


def validate_system_context(system: ResolvedSystemContext) -> None:
    """Keys non-blank and unique, content non-blank, each part under 10 000 tokens (§6 step 2)."""
    seen: set[str] = set()
    for index, part in enumerate(system.parts):
        if not part.key.strip():
            raise SystemContextInvalid(f"system context part {index} has a blank key")
        if part.key in seen:
            raise SystemContextInvalid(f"duplicate system context key {part.key!r}")
        seen.add(part.key)
        if not part.content.strip():
            raise SystemContextInvalid(f"system context part {part.key!r} has blank content")
        check_system_context_part(part)


@functools.lru_cache(maxsize=64)
def checked_system_context_tokens(system: ResolvedSystemContext) -> int:
    """``validate_system_context`` and the region's estimate, once per distinct System Context:
    a session's turns repeat the same one on every call (nothing is cached when it is
    invalid: the error is raised again)."""
    validate_system_context(system)
    return estimate_system_context_tokens(system)


_TOOL_SURFACE_LIMIT = 64
_tool_surface_tokens: dict[tuple[int, ...], tuple[tuple[ToolDefinition, ...], int]] = {}


def tool_surface_tokens(tools: tuple[ToolDefinition, ...]) -> int:
    """``estimate_tool_surface_tokens``, once per distinct list of definition objects: the
    finalized definitions are built once per process and never change, so their identities name
    their bytes (the entry holds the definitions, so no identity is reused while it lives)."""
    key = tuple(map(id, tools))
    entry = _tool_surface_tokens.get(key)
    if entry is None:
        if len(_tool_surface_tokens) >= _TOOL_SURFACE_LIMIT:
            _tool_surface_tokens.clear()
        entry = _tool_surface_tokens[key] = (tools, estimate_tool_surface_tokens(tools))
    return entry[1]


@functools.lru_cache(maxsize=64)
def system_messages(system: ResolvedSystemContext) -> tuple[Message, ...]:
    """The same objects for an equal System Context: every request of a session then starts
    with identical ``Message`` objects, which the adapters' per-message encodings rely on."""
    return tuple(
        Message(role=Role.SYSTEM, content=(TextBlock(text=part.content),)) for part in system.parts
    )


class ContextEngine:
    """Assembles the request copy for one Model Call; stateless."""

    def prepare(
        self,
        *,
        model: str,
        capabilities: ModelCapabilities,
        system: ResolvedSystemContext,
        view: ConversationContextView,
        tools: Sequence[ToolDefinition],
        spill_dir: str | None,
    ) -> PreparedModelCall:
        conversation = normalized_conversation(
            view.items,
            watermark=view.tool_result_pruned_through_sequence,
            spill_dir=spill_dir,
            accepts_data_blocks=capabilities.accepts_data_blocks,
        )
        system_context_tokens = checked_system_context_tokens(system)
        if conversation.has_system_message:
            raise SystemMessageInConversation("the Conversation contains a system message")
        tool_definitions = tuple(tools)
        budget = ContextBudgetEstimate.from_regions(
            system_context_tokens=system_context_tokens,
            conversation_tokens=tokens_for_bytes(
                array_size(conversation.sizes_total, len(conversation.messages))
            ),
            tool_surface_tokens=tool_surface_tokens(tool_definitions),
            reserved_output_tokens=capabilities.max_output_tokens,
        )
        request = ModelRequest(
            model=model,
            messages=system_messages(system) + conversation.messages,
            tools=tool_definitions,
            max_output_tokens=capabilities.max_output_tokens,
        )
        return PreparedModelCall(
            request=request,
            budget=budget,
            projection=conversation.summary,
            sources=conversation.sources,
            conversation=conversation.messages,
            system=system,
            conversation_sizes=conversation.sizes,
        )
