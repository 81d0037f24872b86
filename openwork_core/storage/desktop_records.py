"""Typed rows of the desktop app's reads (issue 16): session summaries, turn history, rewind
targets, the latest plan, sub-agents and trace spans. Values in and out of
``storage.postgres.session_listing`` and ``storage.postgres.history``."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from openwork_core.ids import CompactionId, SessionId, SpanId, TurnId
from openwork_core.storage.records import TurnStatus
from openwork_core.storage.trace_records import SpanKind, SpanStatus
from openwork_core.usage import TokenUsage
from openwork_tools.modes import SandboxMode


class SessionActivity(enum.StrEnum):
    IDLE = "idle"
    RUNNING = "running"


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionKey:
    """The keyset position of a session in the list (newest first)."""

    created_at: datetime
    session_id: SessionId


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionFilter:
    workspace: str | None = None
    archived: bool | None = None
    after: SessionKey | None = None
    limit: int | None = None
    """``None``: every row (the list as the contract first had it)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSummaryRow:
    """A session row with what the list shows. ``first_user_content`` is the stored content of
    the first visible user message, read only while no title was set."""

    id: SessionId
    working_directory: str
    agent: str
    provider_id: str | None
    model_name: str | None
    sandbox_mode: SandboxMode
    parent_session_id: SessionId | None
    created_at: datetime
    title: str | None
    archived: bool
    turn_count: int
    running_turn_id: TurnId | None
    last_activity_at: datetime
    first_user_content: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionPatch:
    """``None`` leaves a field alone; ``clear_title`` sets the title back to the derived one."""

    title: str | None = None
    clear_title: bool = False
    archived: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnHistoryRow:
    turn_id: TurnId
    sequence: int
    status: TurnStatus
    error_code: str | None
    started_at: datetime
    finished_at: datetime | None
    model_calls: int
    usage: TokenUsage
    last_assistant_content: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionRow:
    compaction_id: CompactionId
    sequence: int
    kind: str
    created_at: datetime
    through_message_sequence: int
    parent_compaction_id: CompactionId | None
    trigger_turn_id: TurnId | None
    tokens_before: int | None
    tokens_after: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanRow:
    turn_id: TurnId
    explanation: str | None
    steps_json: str
    updated_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildRow:
    session_id: SessionId
    task_name: str
    agent_role: str
    created_at: datetime
    turn_count: int
    running_turn_id: TurnId | None
    last_turn_status: TurnStatus | None
    last_activity_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class SpanRow:
    span_id: SpanId
    parent_span_id: SpanId | None
    kind: SpanKind
    name: str
    status: SpanStatus
    started_at: datetime
    ended_at: datetime | None
    resolved_model_name: str | None
    provider_call_id: str | None
    tool_name: str | None
    input_tokens: int | None
    output_tokens: int | None
    error_code: str | None
    attributes_json: str
