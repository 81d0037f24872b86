"""Typed rows exchanged with the storage layer."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, TypeAlias

from pydantic import JsonValue

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import Role
from openwork_core.ids import ClientRequestId, MessageId, SessionId, TurnId
from openwork_tools.modes import SandboxMode


class TurnStatus(enum.StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"


class ProviderKind(enum.StrEnum):
    OPENAI_CHAT = "openai-chat"
    OPENAI_RESPONSES = "openai-responses"
    ANTHROPIC = "anthropic"


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderModel:
    """A model the provider offers. ``None`` numbers come from the built-in catalog (or the
    fallback; model-providers.md §4 resolution order)."""

    name: str
    context_window: int | None = None
    max_output_tokens: int | None = None
    max_reasoning_tokens: int = 0
    accepts_data_blocks: bool | None = None


MaxTokensField: TypeAlias = Literal["max_tokens", "max_completion_tokens", "none"]
ReasoningEffort: TypeAlias = Literal["minimal", "low", "medium", "high"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderSettings:
    """Per-provider settings (``providers.settings``, migration 0009; docs/providers.md).

    ``idle_timeout_s`` bounds the wait for the next stream chunk, ``total_timeout_s`` a whole
    submission; ``max_retries`` are the SDK's transport retries before any output (backoff,
    ``Retry-After`` / ``retry-after-ms`` honoured). ``context_window`` / ``max_output_tokens``
    override the catalog and the model rows for every model of the provider (the served window
    of a local server still wins when smaller). Wire options, passed to the adapters:
    ``max_tokens_field`` (which field carries the output limit, or none), ``stream_usage``
    (Chat Completions ``stream_options.include_usage``), ``reasoning_effort`` (None: not sent).
    A key is never a setting (``storage.provider_keys``).
    """

    idle_timeout_s: float = 120.0
    total_timeout_s: float = 30 * 60.0
    max_retries: int = 2
    context_window: int | None = None
    max_output_tokens: int | None = None
    max_tokens_field: MaxTokensField = "max_tokens"
    stream_usage: bool = True
    reasoning_effort: ReasoningEffort | None = None
    probe_served_window: bool = True
    """Ask a local server for the window it serves (Ollama, llama.cpp, vLLM, LM Studio)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderRecord:
    id: str
    kind: ProviderKind
    base_url: str | None
    api_key_env: str | None
    models: tuple[ProviderModel, ...]
    settings: ProviderSettings = ProviderSettings()

    def model(self, name: str | None) -> ProviderModel | None:
        """The named model, or the first one when no name is given."""
        if name is None:
            return self.models[0] if self.models else None
        return next((m for m in self.models if m.name == name), None)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionRecord:
    id: SessionId
    working_directory: str
    agent: str
    provider_id: str | None
    model_name: str | None
    sandbox_mode: SandboxMode
    tool_result_pruned_through_sequence: int | None
    parent_session_id: SessionId | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnRecord:
    id: TurnId
    session_id: SessionId
    client_request_id: ClientRequestId
    sequence: int
    status: TurnStatus
    resolved_provider_id: str
    resolved_model_name: str
    model_call_count: int
    model_submission_count: int
    tool_call_count: int
    input_tokens: int | None
    output_tokens: int | None
    error_code: str | None
    error_message: str | None
    started_at: datetime
    ended_at: datetime | None


@dataclass(frozen=True, slots=True, kw_only=True)
class NewMessage:
    """A message to insert; ``content`` is the JSON array of stored content blocks."""

    id: MessageId
    role: Role
    kind: MessageKind
    content: str
    provider_call_id: str | None = None
    tool_name: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredMessage:
    id: MessageId
    session_id: SessionId
    turn_id: TurnId | None
    sequence: int
    role: Role
    kind: MessageKind
    content: str
    provider_call_id: str | None
    tool_name: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnWarningRecord:
    """One warning a turn raised (migration 0011; issue 24): ``code`` is a
    ``openwork_core.models.warnings.WarningCode`` value, ``model_call`` the call that raised it."""

    code: str
    message: str
    model_call: int | None = None


FILE_CHANGE_TYPE = "file_change"
"""The ``type`` of a ``file_change`` artifact in a stored tool result (tools.md §8)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredFileChange:
    message_id: MessageId
    sequence: int
    artifact: dict[str, JsonValue]
