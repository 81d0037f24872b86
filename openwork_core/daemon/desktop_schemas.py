"""Bodies of the desktop app's routes (issue 16) and the schemas the OpenAPI document names for
routes that answer raw JSON or Server-Sent Events. Additions only: every field of the core
contract's bodies is kept as it is."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field, JsonValue
from pydantic.alias_generators import to_camel

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import Message, ToolDefinition
from openwork_core.body import Body, RequestModel, RootBody
from openwork_core.context.budget import ContextBudgetEstimate
from openwork_core.context.builder import SystemContextPart
from openwork_core.context.inspection import InspectionUsage
from openwork_core.context.limits import ModelContextLimits
from openwork_core.context.normalize import ProjectionSummary
from openwork_core.daemon.errors import SOMETIMES
from openwork_core.daemon.schemas import MessageBody, ModelWarningBody, TurnBody
from openwork_core.daemon.validation import Name
from openwork_core.desktop.titles import is_blank
from openwork_core.desktop.views import ChildSession, SessionSummary
from openwork_core.mcp.surface import ServerShare
from openwork_core.plan.model import PlanStep
from openwork_core.session.snapshot import SessionSnapshot
from openwork_core.session.updates import BroadcastResync, SessionUpdate, UsageBody
from openwork_core.storage.compaction_records import CompactionKind


class SessionSnapshotBody(RootBody[SessionSnapshot]):
    """The snapshot as ``session/wire.py`` writes it (camelCase, session-runtime.md §8)."""


class SessionSummaryWithSnapshot(SessionSummary):
    snapshot: SessionSnapshotBody


def _not_blank(title: str) -> str:
    if is_blank(title):
        raise ValueError("a title needs a visible character (not only spaces or zero-width ones)")
    return title


class PatchSessionBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    title: (
        Annotated[
            str, Field(min_length=1, max_length=200, pattern=r"\S"), AfterValidator(_not_blank)
        ]
        | None
    ) = Field(default=None, description="null puts back the title derived from the first message")
    archived: bool | None = None
    provider: Name | None = Field(
        default=None, description="switch the session's provider (its default model unless named)"
    )
    model: Name | None = Field(
        default=None, description="switch the session's model; null: the provider's default"
    )


class TurnWarningBody(ModelWarningBody):
    """Issue 24 point 4: what the turn was warned about, with the fix in ``message``;
    ``model_call`` is the call that raised it."""

    model_call: int | None


class TurnDetailBody(TurnBody):
    started_at: datetime | None
    finished_at: datetime | None
    usage: UsageBody
    warnings: list[TurnWarningBody]
    model: ModelNameBody | None = Field(
        description="the provider and model the turn ran with (issue 26 point 4); null before "
        "its row is written"
    )


class TurnCancelAcceptedBody(Body):
    turn_id: str


class PermissionAcceptedBody(Body):
    turn_id: str
    tool_call_id: str


class CompactionTargetBody(Body):
    compaction_id: str
    kind: CompactionKind
    sequence: int
    created_at: datetime
    through_message_sequence: int
    parent_compaction_id: str | None
    trigger_turn_id: str | None
    tokens_before: int | None = Field(description="the Conversation region before; null if unknown")
    tokens_after: int | None


class CompactionListBody(Body):
    compactions: list[CompactionTargetBody]


class PlanSnapshotBody(Body):
    """The one plan shape (``PlanView``: explanation, steps, updated at) with its Turn."""

    turn_id: str
    explanation: str | None
    steps: list[PlanStep]
    updated_at: datetime


class PlanBody(Body):
    plan: PlanSnapshotBody | None = Field(description="null before any update_plan call")


class ChildListBody(Body):
    children: list[ChildSession]


class SpanBody(Body):
    span_id: str
    parent_span_id: str | None
    kind: Literal["model_call", "tool_call", "compaction"]
    name: str
    status: str
    started_at: datetime
    ended_at: datetime | None
    resolved_model_name: str | None
    provider_call_id: str | None
    tool_name: str | None
    input_tokens: int | None
    output_tokens: int | None
    error_code: str | None
    attributes: dict[str, JsonValue]


class TraceBody(Body):
    turn_id: str
    spans: list[SpanBody]


class TranscriptPageBody(Body):
    compaction_id: str
    through_message_sequence: int
    messages: list[MessageBody]
    has_more: bool
    next_after_sequence: int


class RealProvenanceBody(Body):
    message_id: str
    sequence: int
    kind: MessageKind


class SyntheticProvenanceBody(Body):
    synthetic: str
    message_id: str | None = Field(default=None, json_schema_extra=SOMETIMES)
    sequence: int | None = Field(default=None, json_schema_extra=SOMETIMES)


class ContextInspectionBody(Body):
    """daemon-api.md §3."""

    system: list[SystemContextPart]
    conversation: list[Message]
    provenance: list[RealProvenanceBody | SyntheticProvenanceBody]
    tools: list[ToolDefinition]
    budget: ContextBudgetEstimate
    limits: ModelContextLimits
    auto_compact_percent: float
    projection: ProjectionSummary
    usage: InspectionUsage | None = Field(description="null while the database is unreachable")
    mcp: McpInspectionBody | None = Field(
        description="the MCP tools' share of the Tool Surface (0 tokens and no server when none "
        "is configured); null for a sub-agent, which has no MCP tool"
    )


class McpInspectionBody(Body):
    """Issue 27: what the MCP servers added to this session's Tool Surface at its load."""

    tokens: int
    servers: list[ServerShare]


class BarSegmentBody(Body):
    region: Literal["system", "conversation", "tools", "mcp_tools", "free", "reserved"]
    tokens: int


class WindowBarBody(Body):
    context_window: int
    segments: list[BarSegmentBody]
    auto_compact_input_tokens: int
    auto_compact_percent: float


class WorldStateEntryBody(Body):
    section: str
    form: Literal["body", "invalidation"]
    tokens: int
    message_id: str | None
    sequence: int | None
    index: int


class LargestItemBody(Body):
    region: Literal["conversation", "tools"]
    index: int
    tokens: int
    label: str
    message_id: str | None
    sequence: int | None
    preview: str


class SystemPartBody(Body):
    key: str
    tokens: int
    content: str


class RegionsBody(Body):
    """Every item of each region in request order (issue 25 point 7)."""

    system: list[SystemPartBody]
    conversation: list[LargestItemBody]
    tools: list[LargestItemBody]


class ModelNameBody(Body):
    provider_id: str
    name: str


class LastCallUsageBody(Body):
    model_name: str
    input_tokens: int | None
    cached_input_tokens: int | None
    output_tokens: int | None
    estimated_input_tokens: int


class UsageSummaryBody(Body):
    model_calls: int
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    cache_hit_ratio: float | None
    last_call: LastCallUsageBody | None


class ContextOverviewBody(Body):
    model: ModelNameBody
    bar: WindowBarBody
    world_state: list[WorldStateEntryBody]
    largest: list[LargestItemBody]
    regions: RegionsBody
    usage: UsageSummaryBody | None
    warnings: list[ModelWarningBody]
    """What the session's model and server cannot do as configured (the provider's model
    warnings, then the latest turn's, then what the inspection's numbers say), each code once."""


SessionUpdateBody = Annotated[SessionUpdate, Field(discriminator="type")]
"""The update union of ``session/updates.py`` (written once there), discriminated on ``type``."""


class BroadcastResyncBody(RootBody[BroadcastResync]):
    """``GET /v1/events``'s ``event: resync`` as ``session/wire.py`` writes it."""


class SessionUpdateEnvelopeBody(Body):
    """The ``data:`` of every SSE event (daemon-api.md §4) as ``session/wire.py`` writes it
    (camelCase); ``update`` by its ``type``."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    version: int
    session_id: str
    turn_id: str | None
    sequence: int
    occurred_at_ms: int
    update: SessionUpdateBody
