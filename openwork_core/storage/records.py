"""Typed rows exchanged with the storage layer."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

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
    name: str
    context_window: int = 128_000
    max_output_tokens: int = 16_384
    max_reasoning_tokens: int = 0
    accepts_data_blocks: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderRecord:
    id: str
    kind: ProviderKind
    base_url: str | None
    api_key_env: str | None
    models: tuple[ProviderModel, ...]

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
class TurnUsage:
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    reasoning_tokens: int | None = None
    cache_write_tokens: int | None = None
