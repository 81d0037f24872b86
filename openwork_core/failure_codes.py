"""The Turn failure codes (session-runtime.md §3), in a module of their own so that lower layers
(World State errors carry their code) import them without importing the session package;
``openwork_core.session.outcome`` re-exports ``FailureCode``."""

from __future__ import annotations

import enum


class FailureCode(enum.StrEnum):
    MODEL_ERROR = "model_error"
    MODEL_PROTOCOL_ERROR = "model_protocol_error"
    PROVIDER_AUTH_FAILED = "provider_auth_failed"
    PROVIDER_UNREACHABLE = "provider_unreachable"
    PROVIDER_RATE_LIMITED = "provider_rate_limited"
    MODEL_NOT_FOUND = "model_not_found"
    PERSISTENCE_ERROR = "persistence_error"
    CHAT_STATE_ERROR = "chat_state_error"
    COMPACTION_ERROR = "compaction_error"
    CONTEXT_WINDOW_TOO_SMALL = "context_window_too_small"
    """Issue 24: the provider refused the request as too long and no compaction can fix it."""
    PERMISSION_DENIED = "permission_denied"
    DOOM_LOOP = "doom_loop"
    MAX_MODEL_CALLS = "max_model_calls"
    ACTOR_STOPPED = "actor_stopped"
    USER_PROJECT_CONTEXT_ERROR = "user_project_context_error"
    PROJECT_INSTRUCTION_ERROR = "project_instruction_error"
    SKILL_CATALOG_TASK_ERROR = "skill_catalog_task_error"
