"""The model port, its errors and capabilities (model-providers.md). Adapters live in
``openwork_core.models.adapters`` (imported on demand: they pull in the SDKs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openwork_core.lazy_exports import lazy_getattr

if TYPE_CHECKING:
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

_EXPORTS = {
    "CapabilityError": "openwork_core.models.capabilities",
    "DeliveryState": "openwork_core.models.port",
    "ErrorPhase": "openwork_core.models.port",
    "FALLBACK_CAPABILITIES": "openwork_core.models.capabilities",
    "FinishReason": "openwork_core.models.port",
    "ModelCallOptions": "openwork_core.models.port",
    "ModelCapabilities": "openwork_core.models.capabilities",
    "ModelError": "openwork_core.models.port",
    "ModelErrorKind": "openwork_core.models.port",
    "ModelEvent": "openwork_core.models.port",
    "ModelPort": "openwork_core.models.port",
    "ModelRequest": "openwork_core.models.port",
    "ModelResponse": "openwork_core.models.port",
    "ReasoningDelta": "openwork_core.models.port",
    "ReasoningEnd": "openwork_core.models.port",
    "ReasoningStart": "openwork_core.models.port",
    "ResponseCompleted": "openwork_core.models.port",
    "RetryHint": "openwork_core.models.port",
    "SEMANTIC_EVENTS": "openwork_core.models.port",
    "TextDelta": "openwork_core.models.port",
    "TextEnd": "openwork_core.models.port",
    "TextStart": "openwork_core.models.port",
    "ThinkingConfig": "openwork_core.models.port",
    "ToolCallDelta": "openwork_core.models.port",
    "ToolCallEnd": "openwork_core.models.port",
    "ToolCallStart": "openwork_core.models.port",
}
"""Each public name's module: nothing is imported until a name is used."""

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

if not TYPE_CHECKING:  # for mypy the names are the imports above: a misspelt one is an error
    __getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
