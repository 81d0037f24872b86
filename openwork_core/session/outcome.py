"""Turn outcomes and failure codes (session-runtime.md §3)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Literal, TypeAlias


class FailureCode(enum.StrEnum):
    MODEL_ERROR = "model_error"
    MODEL_PROTOCOL_ERROR = "model_protocol_error"
    PERSISTENCE_ERROR = "persistence_error"
    CHAT_STATE_ERROR = "chat_state_error"
    COMPACTION_ERROR = "compaction_error"
    PERMISSION_DENIED = "permission_denied"
    DOOM_LOOP = "doom_loop"
    MAX_MODEL_CALLS = "max_model_calls"
    ACTOR_STOPPED = "actor_stopped"
    USER_PROJECT_CONTEXT_ERROR = "user_project_context_error"
    PROJECT_INSTRUCTION_ERROR = "project_instruction_error"
    SKILL_CATALOG_TASK_ERROR = "skill_catalog_task_error"


@dataclass(frozen=True, slots=True)
class Completed:
    status: Literal["completed"] = field(default="completed", kw_only=True)
    final_text: str


@dataclass(frozen=True, slots=True)
class Failed:
    status: Literal["failed"] = field(default="failed", kw_only=True)
    code: FailureCode
    message: str


@dataclass(frozen=True, slots=True)
class Cancelled:
    status: Literal["cancelled"] = "cancelled"


TurnOutcome: TypeAlias = Completed | Failed | Cancelled
"""Discriminated by ``status``; fields in wire order (``status`` first), so the wire serializer
writes ``{"status":"completed","finalText":…}``, ``{"status":"failed","code":…,"message":…}`` and
``{"status":"cancelled"}`` in ``turn_finished`` and the terminal snapshot."""


class TurnFailure(Exception):
    """Raised inside the runner to end the turn with a failure outcome."""

    def __init__(self, code: FailureCode, message: str) -> None:
        super().__init__(message)
        self.outcome = Failed(code, message)


class TurnCancelled(Exception):
    """Raised inside the runner when the turn's cancel signal fired."""
