"""Bodies of the desktop app's routes (issue 16) and the schemas the OpenAPI document names for
routes that answer raw JSON or Server-Sent Events. Additions only: every field of the core
contract's bodies is kept as it is."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, RootModel
from pydantic.alias_generators import to_camel

from openwork_chat_state.messages import Message, ToolDefinition
from openwork_core.context.budget import ContextBudgetEstimate
from openwork_core.context.builder import SystemContextPart
from openwork_core.context.limits import ModelContextLimits
from openwork_core.context.normalize import ProjectionSummary
from openwork_core.daemon.schemas import MessageBody, ModelWarningBody, SessionBody, TurnBody
from openwork_core.session.snapshot import SessionSnapshot
from openwork_core.session.updates import (
    ContextUpdated,
    DraftCleared,
    PermissionRequested,
    PermissionResolved,
    PhaseChanged,
    PlanUpdated,
    ReasoningDeltaUpdate,
    Resync,
    TextDeltaUpdate,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    WarningRaised,
)

SessionStatus = Literal["idle", "running"]
TurnStatusName = Literal["running", "completed", "failed", "cancelled", "interrupted"]


class ErrorDetail(BaseModel):
    model_config = ConfigDict(extra="allow")
    code: str = Field(description="stable snake_case error code")
    message: str = Field(description="for humans")


class ErrorEnvelope(BaseModel):
    """Every error: ``{"error": {"code", "message", ...extra}}`` (daemon-api.md §2)."""

    error: ErrorDetail


class SessionSummaryBody(SessionBody):
    parent_session_id: str | None
    title: str | None = Field(
        description="the user's title, else the first line of the first user message (≤ 80)"
    )
    title_is_derived: bool
    archived: bool
    status: SessionStatus
    active_turn_id: str | None
    turn_count: int
    last_activity_at: datetime


class SessionSnapshotBody(RootModel[SessionSnapshot]):
    """The snapshot as ``session/wire.py`` writes it (camelCase, session-runtime.md §8)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class SessionSummaryWithSnapshot(SessionSummaryBody):
    snapshot: SessionSnapshotBody


class SessionPageBody(BaseModel):
    sessions: list[SessionSummaryBody]
    next_cursor: str | None = Field(description="pass as ?cursor= for the next page; null at end")


class PatchSessionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: Annotated[str, Field(min_length=1, max_length=200, pattern=r"\S")] | None = Field(
        default=None, description="null puts back the title derived from the first message"
    )
    archived: bool | None = None


class UsageBody(BaseModel):
    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    output_tokens: int
    reasoning_tokens: int


class TurnSummaryBody(BaseModel):
    turn_id: str
    sequence: int
    status: TurnStatusName
    error_code: str | None
    started_at: datetime | None
    finished_at: datetime | None
    model_calls: int
    usage: UsageBody
    final_text_preview: str | None


class TurnPageBody(BaseModel):
    turns: list[TurnSummaryBody]
    next_cursor: str | None


class TurnWarningBody(BaseModel):
    """Issue 24 point 4: what the turn was warned about (``code``: window_too_small,
    input_truncation_suspected, tools_unsupported, served_window_smaller), with the fix in
    ``message``; ``model_call`` is the call that raised it."""

    code: str
    message: str
    model_call: int | None


class TurnDetailBody(TurnBody):
    started_at: datetime | None
    finished_at: datetime | None
    usage: UsageBody
    warnings: list[TurnWarningBody]


class TurnCancelAcceptedBody(BaseModel):
    turn_id: str


class PermissionAcceptedBody(BaseModel):
    turn_id: str
    tool_call_id: str


class CompactionTargetBody(BaseModel):
    compaction_id: str
    kind: Literal["manual", "threshold", "overflow", "rewind"]
    sequence: int
    created_at: datetime
    through_message_sequence: int
    parent_compaction_id: str | None
    trigger_turn_id: str | None
    tokens_before: int | None = Field(description="the Conversation region before; null if unknown")
    tokens_after: int | None


class CompactionListBody(BaseModel):
    compactions: list[CompactionTargetBody]


class PlanStepBody(BaseModel):
    step: str
    status: Literal["pending", "in_progress", "completed"]


class PlanSnapshotBody(BaseModel):
    turn_id: str
    explanation: str | None
    steps: list[PlanStepBody]
    updated_at: datetime


class PlanBody(BaseModel):
    plan: PlanSnapshotBody | None = Field(description="null before any update_plan call")


class ChildSessionBody(BaseModel):
    session_id: str
    task_name: str
    agent_role: str
    status: SessionStatus
    active_turn_id: str | None
    last_turn_status: TurnStatusName | None
    turn_count: int
    created_at: datetime
    last_activity_at: datetime


class ChildListBody(BaseModel):
    children: list[ChildSessionBody]


class SpanBody(BaseModel):
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


class TraceBody(BaseModel):
    turn_id: str
    spans: list[SpanBody]


class TranscriptPageBody(BaseModel):
    compaction_id: str
    through_message_sequence: int
    messages: list[MessageBody]
    has_more: bool
    next_after_sequence: int


class RealProvenanceBody(BaseModel):
    message_id: str
    sequence: int
    kind: Literal["normal", "skill_instruction", "agent_message", "world_state"]


class SyntheticProvenanceBody(BaseModel):
    synthetic: str
    message_id: str | None = None
    sequence: int | None = None


class ContextInspectionBody(BaseModel):
    """daemon-api.md §3."""

    system: list[SystemContextPart]
    conversation: list[Message]
    provenance: list[RealProvenanceBody | SyntheticProvenanceBody]
    tools: list[ToolDefinition]
    budget: ContextBudgetEstimate
    limits: ModelContextLimits
    auto_compact_percent: float
    projection: ProjectionSummary


class BarSegmentBody(BaseModel):
    region: Literal["system", "conversation", "tools", "free", "reserved"]
    tokens: int


class WindowBarBody(BaseModel):
    context_window: int
    segments: list[BarSegmentBody]
    auto_compact_input_tokens: int
    auto_compact_percent: float


class WorldStateEntryBody(BaseModel):
    section: str
    form: Literal["body", "invalidation"]
    tokens: int
    message_id: str | None
    sequence: int | None
    index: int


class LargestItemBody(BaseModel):
    region: Literal["conversation", "tools"]
    index: int
    tokens: int
    label: str
    message_id: str | None
    sequence: int | None
    preview: str


class ContextOverviewBody(BaseModel):
    bar: WindowBarBody
    world_state: list[WorldStateEntryBody]
    largest: list[LargestItemBody]
    warnings: list[ModelWarningBody]
    """Issue 24 point 4: what the session's model and server cannot do as configured (the
    provider's model warnings, then the latest turn's), each code once, with the fix."""


SessionUpdateBody = Annotated[
    TurnStarted
    | PhaseChanged
    | TextDeltaUpdate
    | ReasoningDeltaUpdate
    | DraftCleared
    | ToolCallStarted
    | ToolCallProgress
    | ToolCallFinished
    | PermissionRequested
    | PermissionResolved
    | PlanUpdated
    | ContextUpdated
    | WarningRaised
    | TurnFinished
    | Resync,
    Field(discriminator="type"),
]


class SessionUpdateEnvelopeBody(BaseModel):
    """The ``data:`` of every SSE event (daemon-api.md §4) as ``session/wire.py`` writes it
    (camelCase); ``update`` by its ``type``."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    version: int
    session_id: str
    turn_id: str | None
    sequence: int
    occurred_at_ms: int
    update: SessionUpdateBody
