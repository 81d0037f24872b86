"""The model port, its errors and capabilities (model-providers.md). Adapters live in
``openwork_core.models.adapters`` (imported on demand: they pull in the SDKs)."""

from __future__ import annotations

from openwork_core.models.capabilities import (
    FALLBACK_CAPABILITIES,
    CapabilityError,
    ModelCapabilities,
)
from openwork_core.models.port import (
    SEMANTIC_EVENTS,
    DeliveryState,
    ErrorPhase,
    FinishReason,
    ModelCallOptions,
    ModelError,
    ModelErrorKind,
    ModelEvent,
    ModelPort,
    ModelRequest,
    ModelResponse,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    ResponseCompleted,
    RetryHint,
    TextDelta,
    TextEnd,
    TextStart,
    ThinkingConfig,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

__all__ = [
    "FALLBACK_CAPABILITIES",
    "SEMANTIC_EVENTS",
    "CapabilityError",
    "DeliveryState",
    "ErrorPhase",
    "FinishReason",
    "ModelCallOptions",
    "ModelCapabilities",
    "ModelError",
    "ModelErrorKind",
    "ModelEvent",
    "ModelPort",
    "ModelRequest",
    "ModelResponse",
    "ReasoningDelta",
    "ReasoningEnd",
    "ReasoningStart",
    "ResponseCompleted",
    "RetryHint",
    "TextDelta",
    "TextEnd",
    "TextStart",
    "ThinkingConfig",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
]
