"""What the desktop reads answer (issue 16): frozen values the routes turn into bodies."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from openwork_core.ids import SessionId, TurnId
from openwork_core.storage.desktop_records import SessionActivity, TokenUsage
from openwork_core.storage.records import TurnStatus
from openwork_tools.modes import SandboxMode


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSummary:
    session_id: SessionId
    workspace: str
    agent: str
    provider: str | None
    model: str | None
    permission_mode: SandboxMode
    created_at: datetime
    parent_session_id: SessionId | None
    title: str | None
    title_is_derived: bool
    archived: bool
    status: SessionActivity
    active_turn_id: TurnId | None
    turn_count: int
    last_activity_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionPage:
    sessions: tuple[SessionSummary, ...]
    next_cursor: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnSummary:
    turn_id: TurnId
    sequence: int
    status: TurnStatus
    error_code: str | None
    started_at: datetime | None
    finished_at: datetime | None
    model_calls: int
    usage: TokenUsage
    final_text_preview: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnPage:
    turns: tuple[TurnSummary, ...]
    next_cursor: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildSession:
    session_id: SessionId
    task_name: str
    agent_role: str
    status: SessionActivity
    active_turn_id: TurnId | None
    last_turn_status: TurnStatus | None
    turn_count: int
    created_at: datetime
    last_activity_at: datetime
