"""What the desktop reads answer (issue 16): the response bodies themselves (one type per
concept: the summary the queries build is the body the routes send, snake_case as every REST
body)."""

from __future__ import annotations

from datetime import datetime

from pydantic import ConfigDict, Field

from openwork_core.body import Body
from openwork_core.ids import SessionId, TurnId
from openwork_core.session.updates import UsageBody
from openwork_core.storage.desktop_records import SessionActivity
from openwork_core.storage.records import TurnStatus
from openwork_tools.modes import SandboxMode

_FROZEN = ConfigDict(frozen=True)


class SessionSummary(Body):
    """A session as the list and ``GET /v1/sessions/{sid}`` show it: the fields of
    ``POST /v1/sessions``'s answer and its activity."""

    model_config = _FROZEN
    session_id: SessionId
    workspace: str
    agent: str
    provider: str | None
    model: str | None
    permission_mode: SandboxMode
    created_at: datetime
    parent_session_id: SessionId | None
    title: str | None = Field(
        description="the user's title, else the first line of the first user message (≤ 80)"
    )
    title_is_derived: bool
    archived: bool
    status: SessionActivity
    active_turn_id: TurnId | None
    turn_count: int
    last_activity_at: datetime


class SessionPage(Body):
    model_config = _FROZEN
    sessions: tuple[SessionSummary, ...]
    next_cursor: str | None = Field(description="pass as ?cursor= for the next page; null at end")


class TurnSummary(Body):
    model_config = _FROZEN
    turn_id: TurnId
    sequence: int
    status: TurnStatus
    error_code: str | None
    started_at: datetime | None
    finished_at: datetime | None
    model_calls: int
    usage: UsageBody
    final_text_preview: str | None
    reverted: bool = Field(
        default=False, description="hidden from the Conversation by a revert (issue 26 point 3)"
    )


class TurnPage(Body):
    model_config = _FROZEN
    turns: tuple[TurnSummary, ...]
    next_cursor: str | None


class ChildSession(Body):
    model_config = _FROZEN
    session_id: SessionId
    task_name: str
    agent_role: str
    status: SessionActivity
    active_turn_id: TurnId | None
    last_turn_status: TurnStatus | None
    turn_count: int
    created_at: datetime
    last_activity_at: datetime
