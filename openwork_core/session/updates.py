"""SessionUpdate: the live, lossy per-session event stream (session-runtime.md §7).

Attributes are snake_case; ``openwork_core.session.wire`` is the one place that writes them in the
protocol's camelCase (the SSE payload). The numbering, the replay buffers and the subscribers are
``session/update_streams.py``."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, TypeAlias

import orjson
from pydantic import JsonValue

from openwork_chat_state.messages import JsonObject, ToolCallBlock
from openwork_core.ids import ClientRequestId, SessionId, SteerId, ToolCallId, TurnId
from openwork_core.models.warnings import WarningCode
from openwork_core.plan.model import PlanStep, TurnPlan
from openwork_core.session.approval import PermissionDecision, PermissionRequest
from openwork_core.session.outcome import TurnOutcome
from openwork_core.session.wire_fields import OMIT_WHEN_NONE
from openwork_core.usage import TokenUsage
from openwork_tools.results import FileChange, ToolStatus

SESSION_UPDATE_VERSION = 7


class SessionPhase(enum.StrEnum):
    STARTING = "starting"
    RUNNING_MODEL = "running_model"
    RUNNING_TOOLS = "running_tools"
    WAITING_PERMISSION = "waiting_permission"
    COMPACTING = "compacting"


def utc_timestamp(moment: datetime) -> str:
    """The one timestamp format of the contract: RFC 3339 in UTC with ``Z`` (as pydantic writes
    the REST bodies' datetimes)."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def call_input(arguments: str) -> tuple[JsonObject, str | None]:
    """A tool call's arguments as what they are, a JSON object, and the model's text when it is
    not one (the model is untrusted: its call then fails validation, and ``input`` is ``{}``)."""
    try:
        parsed = orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        return {}, arguments
    return (parsed, None) if isinstance(parsed, dict) else ({}, arguments)


class LiveToolStatus(enum.StrEnum):
    """A live tool call's status before it has a ``ToolStatus``: its input being validated."""

    VALIDATING = "validating"


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveToolCall:
    tool_call_id: ToolCallId
    provider_call_id: str
    name: str
    input: JsonObject
    """The parsed arguments (``{}`` when the model's were not a JSON object: see ``raw_input``)."""
    status: ToolStatus | Literal[LiveToolStatus.VALIDATING]
    output: str | None = None
    is_error: bool | None = None
    artifacts: list[FileChange] | None = None
    raw_input: str | None = field(default=None, metadata=OMIT_WHEN_NONE)
    """Present only when the model's arguments were not a JSON object: its text as sent."""

    @classmethod
    def validating(cls, tool_call_id: ToolCallId, call: ToolCallBlock) -> LiveToolCall:
        arguments, raw = call_input(call.input)
        return cls(
            tool_call_id=tool_call_id,
            provider_call_id=call.id,
            name=call.name,
            input=arguments,
            status=LiveToolStatus.VALIDATING,
            raw_input=raw,
        )


def file_change_artifacts(artifacts: Iterable[JsonValue]) -> list[FileChange] | None:
    """The stored ``file_change`` artifacts of a tool result as the wire writes them (``None``
    when there are none)."""
    changes = [FileChange.from_json(a) for a in artifacts if isinstance(a, dict)]
    return changes or None


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStarted:
    type: Literal["turn_started"] = "turn_started"
    client_request_id: ClientRequestId


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnSteered:
    """Our addition (issue 26 point 1): input added to the running turn was committed; it joins
    the Conversation as the user's message at the turn's next model call. ``text`` is its
    visible text."""

    type: Literal["turn_steered"] = "turn_steered"
    steer_id: SteerId
    client_request_id: ClientRequestId
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseChanged:
    type: Literal["phase_changed"] = "phase_changed"
    phase: SessionPhase


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDeltaUpdate:
    type: Literal["text_delta"] = "text_delta"
    delta: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningDeltaUpdate:
    type: Literal["reasoning_delta"] = "reasoning_delta"
    delta: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DraftCleared:
    type: Literal["draft_cleared"] = "draft_cleared"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStarted:
    type: Literal["tool_call_started"] = "tool_call_started"
    tool_call: LiveToolCall


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolProgress:
    kind: Literal["stdout", "stderr", "message"]
    chunk: str | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallProgress:
    type: Literal["tool_call_progress"] = "tool_call_progress"
    tool_call_id: ToolCallId
    progress: ToolProgress


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallFinished:
    type: Literal["tool_call_finished"] = "tool_call_finished"
    tool_call_id: ToolCallId
    provider_call_id: str
    tool_name: str
    status: ToolStatus
    output: str
    is_error: bool
    artifacts: list[FileChange] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionRequested:
    type: Literal["permission_requested"] = "permission_requested"
    request: PermissionRequest


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionResolved:
    type: Literal["permission_resolved"] = "permission_resolved"
    tool_call_id: ToolCallId
    decision: PermissionDecision


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanView:
    """The one plan shape (update-plan.md §7 ``TurnPlanSnapshot{explanation, steps, updatedAt}``):
    in ``plan_updated``, in the snapshot's runtime and (with its ``turn_id``) in
    ``GET …/plan``. ``updated_at`` is RFC 3339 UTC with ``Z``."""

    explanation: str | None
    steps: list[PlanStep]
    updated_at: str

    @classmethod
    def of(cls, plan: TurnPlan) -> PlanView:
        return cls(
            explanation=plan.explanation,
            steps=list(plan.steps),
            updated_at=utc_timestamp(plan.updated_at),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanUpdated:
    """The plan's fields (``PlanView``) and, as update-plan.md §7 names it, ``plan``: the same
    steps again (kept for the spec's clients)."""

    type: Literal["plan_updated"] = "plan_updated"
    explanation: str | None
    steps: list[PlanStep]
    updated_at: str
    plan: list[PlanStep]

    @classmethod
    def of(cls, plan: TurnPlan) -> PlanUpdated:
        view = PlanView.of(plan)
        return cls(
            explanation=view.explanation,
            steps=view.steps,
            updated_at=view.updated_at,
            plan=view.steps,
        )

    @property
    def view(self) -> PlanView:
        return PlanView(explanation=self.explanation, steps=self.steps, updated_at=self.updated_at)


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextUpdated:
    """Our addition: the budget of the request just prepared for a model call."""

    type: Literal["context_updated"] = "context_updated"
    system_context_tokens: int
    conversation_tokens: int
    tool_surface_tokens: int
    estimated_input_tokens: int
    reserved_output_tokens: int
    auto_compact_percent: float


@dataclass(frozen=True, slots=True, kw_only=True)
class WarningRaised:
    """Our addition (issue 24 point 4): the model or its server cannot work as configured for
    this turn; ``message`` says what to change. Each code once per turn, also kept in the
    turn's ``warnings``."""

    type: Literal["warning"] = "warning"
    code: WarningCode
    message: str
    model_call: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageBody:
    """The one wire body of a usage record (``openwork_core.usage.TokenUsage``): a Turn's
    provider-reported tokens summed over its submissions, 0 where none reported (issue 14 point
    5); in ``turn_finished`` (camelCase) and in the REST turn bodies (snake_case)."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0

    @classmethod
    def of(cls, usage: TokenUsage) -> UsageBody:
        return cls(
            input_tokens=usage.input_tokens or 0,
            cached_input_tokens=usage.cached_input_tokens or 0,
            cache_write_tokens=usage.cache_write_tokens or 0,
            output_tokens=usage.output_tokens or 0,
            reasoning_tokens=usage.reasoning_tokens or 0,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnFinished:
    type: Literal["turn_finished"] = "turn_finished"
    outcome: TurnOutcome
    usage: UsageBody | None = field(default=None, metadata=OMIT_WHEN_NONE)
    """Left out when the turn's runner reported none (it crashed or was abandoned)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Resync:
    """Sent first when updates the client asked for cannot be delivered (the cursor left the
    buffer, is ahead of this process's sequences, or a subscriber fell behind): read the snapshot.
    Its envelope's ``sequence`` is the session's current sequence when the resync was decided;
    buffered updates that follow and are not newer than the snapshot are already folded in it."""

    type: Literal["resync"] = "resync"


class StreamEndReason(enum.StrEnum):
    DELETED = "deleted"
    """The session was deleted: every route for it now answers 404."""
    UNLOADED = "unloaded"
    """Its actor was stopped (idle, rebuilt, ownership lost, the daemon stopping): connect again
    to load it; its sequences continue above this one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamEnded:
    """Our addition: the session's last update from this actor; its event streams end after it."""

    type: Literal["stream_ended"] = "stream_ended"
    reason: StreamEndReason


SessionUpdate: TypeAlias = (
    TurnStarted
    | TurnSteered
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
    | Resync
    | StreamEnded
)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionUpdateEnvelope:
    version: int = SESSION_UPDATE_VERSION
    session_id: SessionId
    turn_id: TurnId | None
    sequence: int
    occurred_at_ms: int
    update: SessionUpdate


@dataclass(frozen=True, slots=True, kw_only=True)
class BroadcastResync:
    """``GET /v1/events``'s ``event: resync``: events the client asked for are lost (its cursor
    left the buffer or is from another process, or it fell behind): read the sessions again.
    ``sequence`` is the broadcast's current one, also the event's ``id:``."""

    version: int = SESSION_UPDATE_VERSION
    sequence: int
    update: Resync = field(default_factory=Resync)


@dataclass(frozen=True, slots=True, kw_only=True)
class GlobalEvent:
    """One envelope on the Core-wide broadcast with its broadcast ``sequence`` (the SSE ``id:`` of
    ``GET /v1/events``): increasing across all sessions and across restarts
    (``broadcast_floor``)."""

    sequence: int
    envelope: SessionUpdateEnvelope
