"""The context-window inspection (context-window.md §8, daemon-api.md §3).

A pure view of one ``PreparedModelCall`` — the very result of the ``ContextEngine.prepare`` that
real model calls use — plus the model limits. Its JSON has exactly the shape of daemon-api.md §3:
``system``, ``conversation``, ``provenance``, ``tools``, ``budget``, ``limits``,
``auto_compact_percent``, ``projection`` — plus ``usage`` (issue 14 points 5, 9): the session's
last recorded submission as the provider reported it, next to the estimate, with its cache
diagnostics, and the session's totals with its cache-hit ratio (null when nothing is recorded);
and ``mcp`` (issue 27): the MCP tools' share of the Tool Surface — their tokens, and each server
with its status at the session's load (a server not ``ready`` then has no tools, and its reason).
The ``system``, ``conversation`` and ``tools`` arrays are the request regions exactly as
measured, so each region's token figure equals ⌈len(compact JSON of that array) / 4⌉.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson

from openwork_chat_state.messages import Message, ToolDefinition
from openwork_core.context.budget import ContextBudgetEstimate
from openwork_core.context.builder import SystemContextPart
from openwork_core.context.limits import ModelContextLimits
from openwork_core.context.normalize import ProjectionSummary
from openwork_core.context.provenance import Provenance, provenance_json
from openwork_core.storage.usage_records import SessionUsageTotals, StoredModelCall

if TYPE_CHECKING:
    from openwork_core.context.engine import PreparedModelCall
    from openwork_core.mcp.surface import McpSurface


@dataclass(frozen=True, slots=True, kw_only=True)
class InspectionUsage:
    """Real numbers beside the estimate: the last call and the session's totals."""

    last_call: StoredModelCall | None
    session: SessionUsageTotals
    cache_hit_ratio: float | None

    @classmethod
    def of(cls, last_call: StoredModelCall | None, totals: SessionUsageTotals) -> InspectionUsage:
        return cls(last_call=last_call, session=totals, cache_hit_ratio=totals.cache_hit_ratio)


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextInspection:
    system: tuple[SystemContextPart, ...]
    conversation: tuple[Message, ...]
    provenance: tuple[Provenance, ...]
    tools: tuple[ToolDefinition, ...]
    budget: ContextBudgetEstimate
    limits: ModelContextLimits
    auto_compact_percent: float
    projection: ProjectionSummary
    usage: InspectionUsage | None = None
    mcp: McpSurface | None = None

    def to_json(self) -> bytes:
        """The compact JSON body of ``GET /v1/sessions/{sid}/context``."""
        return orjson.dumps(
            {
                "system": self.system,
                "conversation": self.conversation,
                "provenance": [provenance_json(p) for p in self.provenance],
                "tools": self.tools,
                "budget": self.budget,
                "limits": self.limits,
                "auto_compact_percent": self.auto_compact_percent,
                "projection": self.projection,
                "usage": self.usage,
                "mcp": None
                if self.mcp is None
                else {"tokens": self.mcp.tokens, "servers": self.mcp.servers},
            },
            option=orjson.OPT_UTC_Z,  # the contract's one timestamp form: RFC 3339 UTC with Z
        )


def build_context_inspection(
    prepared: PreparedModelCall,
    limits: ModelContextLimits,
    usage: InspectionUsage | None = None,
    mcp: McpSurface | None = None,
) -> ContextInspection:
    return ContextInspection(
        system=prepared.system.parts,
        conversation=prepared.conversation,
        provenance=prepared.provenance,
        tools=prepared.request.tools,
        budget=prepared.budget,
        limits=limits,
        auto_compact_percent=limits.auto_compact_percent(prepared.budget),
        projection=prepared.projection,
        usage=usage,
        mcp=mcp,
    )
