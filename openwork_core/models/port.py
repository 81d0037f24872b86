"""Provider-neutral model port: request, stream events, response, errors (model-providers.md)."""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import ClassVar, Literal, Protocol, TypeAlias

from openwork_chat_state.messages import (
    Message,
    ProviderOpaqueBlock,
    ToolCallBlock,
    ToolDefinition,
)
from openwork_core.usage import TokenUsage


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingConfig:
    mode: Literal["enabled", "disabled"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRequest:
    """What one provider submission carries. System parts first, then the Conversation; tool
    definitions in their own field. Provider id, base URL, key and retry policy never go here."""

    model: str
    messages: tuple[Message, ...]
    tools: tuple[ToolDefinition, ...] = ()
    max_output_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    thinking: ThinkingConfig | None = None


class FinishReason(enum.StrEnum):
    STOP = "stop"
    LENGTH = "length"
    TOOL_USE = "tool_use"
    CONTENT_FILTER = "content_filter"
    REFUSAL = "refusal"
    CANCELLED = "cancelled"
    INCOMPLETE = "incomplete"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelResponse:
    text: str
    tool_calls: tuple[ToolCallBlock, ...] = ()
    reasoning_text: str | None = None
    finish_reason: FinishReason = FinishReason.STOP
    raw_finish_reason: str | None = None
    response_id: str | None = None
    provider_request_id: str | None = None
    model: str | None = None
    usage: TokenUsage | None = None
    provider_opaque_blocks: tuple[ProviderOpaqueBlock, ...] = ()
    """Adapter-produced blocks (e.g. signed thinking) that go back only to the same driver."""


# -- streamed events -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class TextStart:
    type: Literal["text_start"] = "text_start"
    index: int
    id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    type: Literal["text_delta"] = "text_delta"
    index: int
    delta: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TextEnd:
    type: Literal["text_end"] = "text_end"
    index: int
    id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningStart:
    type: Literal["reasoning_start"] = "reasoning_start"
    index: int
    id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningDelta:
    type: Literal["reasoning_delta"] = "reasoning_delta"
    index: int
    delta: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningEnd:
    type: Literal["reasoning_end"] = "reasoning_end"
    index: int
    id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStart:
    type: Literal["tool_call_start"] = "tool_call_start"
    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallDelta:
    type: Literal["tool_call_delta"] = "tool_call_delta"
    index: int
    id: str
    partial_input: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallEnd:
    type: Literal["tool_call_end"] = "tool_call_end"
    index: int
    id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseCompleted:
    type: Literal["response_completed"] = "response_completed"
    response: ModelResponse


ModelEvent: TypeAlias = (
    TextStart
    | TextDelta
    | TextEnd
    | ReasoningStart
    | ReasoningDelta
    | ReasoningEnd
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | ResponseCompleted
)

SEMANTIC_EVENTS = (TextDelta, ReasoningDelta, ToolCallStart, ToolCallDelta)
"""After the first of these, errors are not retried and overflow does not compact."""


# -- errors ---------------------------------------------------------------------------------
class ModelErrorKind(enum.StrEnum):
    AUTHENTICATION = "authentication"
    PERMISSION_DENIED = "permission_denied"
    INVALID_REQUEST = "invalid_request"
    CONTEXT_OVERFLOW = "context_overflow"
    MODEL_NOT_FOUND = "model_not_found"
    CAPABILITY_UNSUPPORTED = "capability_unsupported"
    RATE_LIMITED = "rate_limited"
    QUOTA_EXHAUSTED = "quota_exhausted"
    OVERLOADED = "overloaded"
    TIMEOUT = "timeout"
    NETWORK = "network"
    SERVER_ERROR = "server_error"
    CONTENT_FILTERED = "content_filtered"
    PROTOCOL_ERROR = "protocol_error"
    CANCELLED = "cancelled"
    UNKNOWN = "unknown"


class ErrorPhase(enum.StrEnum):
    REQUEST_ENCODE = "request_encode"
    CONNECT = "connect"
    RESPONSE_HEADERS = "response_headers"
    RESPONSE_BODY = "response_body"
    STREAM_DECODE = "stream_decode"
    RESPONSE_DECODE = "response_decode"
    CANCELLED = "cancelled"


class DeliveryState(enum.StrEnum):
    NOT_SENT = "not_sent"
    POSSIBLY_SENT = "possibly_sent"
    ACCEPTED_NO_SEMANTIC_OUTPUT = "accepted_no_semantic_output"
    SEMANTIC_OUTPUT_EMITTED = "semantic_output_emitted"


class RetryHint(enum.StrEnum):
    NEVER = "never"
    BACKOFF = "backoff"
    AFTER_MILLIS = "after_millis"
    CALLER_DECISION = "caller_decision"


_DIAGNOSTIC_CAP = 4096


class ModelError(Exception):
    code: ClassVar[str] = "model_error"

    def __init__(
        self,
        kind: ModelErrorKind,
        message: str,
        *,
        phase: ErrorPhase,
        delivery: DeliveryState,
        retry: RetryHint = RetryHint.NEVER,
        http_status: int | None = None,
        provider_code: str | None = None,
        provider_request_id: str | None = None,
        retry_after_ms: int | None = None,
    ) -> None:
        super().__init__(message[:_DIAGNOSTIC_CAP])
        self.kind = kind
        self.message = message[:_DIAGNOSTIC_CAP]
        self.phase = phase
        self.delivery = delivery
        self.retry = retry
        self.http_status = http_status
        self.provider_code = provider_code[:256] if provider_code else None
        self.provider_request_id = provider_request_id
        self.retry_after_ms = retry_after_ms
        """With ``retry`` AFTER_MILLIS: the provider's retry-after-ms / Retry-After in ms."""

    def with_delivery(self, delivery: DeliveryState) -> ModelError:
        return ModelError(
            self.kind,
            self.message,
            phase=self.phase,
            delivery=delivery,
            retry=self.retry,
            http_status=self.http_status,
            provider_code=self.provider_code,
            provider_request_id=self.provider_request_id,
            retry_after_ms=self.retry_after_ms,
        )

    @classmethod
    def protocol(cls, detail: str) -> ModelError:
        return cls(
            ModelErrorKind.PROTOCOL_ERROR,
            f"provider protocol error: {detail}",
            phase=ErrorPhase.STREAM_DECODE,
            delivery=DeliveryState.ACCEPTED_NO_SEMANTIC_OUTPUT,
        )

    @classmethod
    def network(cls, detail: str) -> ModelError:
        return cls(
            ModelErrorKind.NETWORK,
            f"provider network error: {detail}",
            phase=ErrorPhase.CONNECT,
            delivery=DeliveryState.POSSIBLY_SENT,
            retry=RetryHint.BACKOFF,
        )

    @classmethod
    def timeout(cls) -> ModelError:
        return cls(
            ModelErrorKind.TIMEOUT,
            "provider request timed out",
            phase=ErrorPhase.CONNECT,
            delivery=DeliveryState.POSSIBLY_SENT,
            retry=RetryHint.BACKOFF,
        )

    @classmethod
    def invalid_request(cls, detail: str) -> ModelError:
        return cls(
            ModelErrorKind.INVALID_REQUEST,
            f"invalid provider request: {detail}",
            phase=ErrorPhase.REQUEST_ENCODE,
            delivery=DeliveryState.NOT_SENT,
        )


# -- options and the port -------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCallOptions:
    model_attempt_id: str
    idle_timeout_s: float = 120.0
    total_timeout_s: float = 30 * 60.0
    max_transport_attempts: int = 3
    session_id: str | None = None
    """The session the call belongs to: OpenAI's ``prompt_cache_key`` (issue 14 point 4)."""


class ModelPort(Protocol):
    """One streaming submission. Raises ModelError; cancellation = stop iterating."""

    def invoke(
        self, request: ModelRequest, options: ModelCallOptions
    ) -> AsyncIterator[ModelEvent]: ...
