"""Trace spans as the trace writer hands them to storage (session-runtime.md §1, §11; the
``trace_spans`` table of migration 0004): their kind, status and the rows of one batch."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pydantic import JsonValue

from openwork_core.ids import MessageId, SessionId, SpanId, TurnId
from openwork_tools.results import ToolStatus


class SpanKind(enum.StrEnum):
    MODEL_CALL = "model_call"
    TOOL_CALL = "tool_call"
    COMPACTION = "compaction"


class SpanStatus(enum.StrEnum):
    """A span's status; a tool call's span ends with its ``ToolStatus`` (``of``)."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    DENIED = "denied"
    CANCELLED = "cancelled"
    OUTCOME_UNKNOWN = "outcome_unknown"

    @staticmethod
    def of(status: ToolStatus) -> SpanStatus:
        return SpanStatus(status.value)


class PermissionDecisionSource(enum.StrEnum):
    """A tool call span's ``permissionDecisionSource`` when it ran or was cancelled; a denial's
    is its ``approval.DenialSource``."""

    SANDBOX = "sandbox"
    USER = "user"
    CONTROL_TOOL = "control_tool"
    SYSTEM = "system"


class SpanPermission(enum.StrEnum):
    """A tool call span's ``permissionDecision``."""

    ALLOW = "allow"
    DENY = "deny"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True, kw_only=True)
class SpanOpened:
    """A span's row as opened (``status='running'``)."""

    span_id: SpanId
    trace_id: str
    session_id: SessionId
    turn_id: TurnId | None
    parent_span_id: SpanId | None
    kind: SpanKind
    name: str
    started_at: datetime
    model_id: str | None = None
    resolved_model_name: str | None = None
    provider_call_id: str | None = None
    requested_tool_name: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SpanClosed:
    """A span's terminal columns. ``ended_at``: now, unless the span really ended earlier (a
    deferred assistant message: its model call ended before the write that lets the span name
    the message)."""

    span_id: SpanId
    status: SpanStatus
    ended_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    error_code: str | None = None
    error_message: str | None = None
    attributes: dict[str, JsonValue] = field(default_factory=dict)
    input_tokens: int | None = None
    output_tokens: int | None = None
    resolved_tool_name: str | None = None
    response_message_id: MessageId | None = None
    permission_wait_ms: int | None = None
