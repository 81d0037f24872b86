"""Model adapters: one ``ModelPort`` per wire protocol, on the official SDKs, and the scripted
port for in-process tests (model-providers.md §5; docs/providers.md).

The SDK-backed adapters are imported on first use (``build_model_port`` or attribute access):
importing the ``openai`` and ``anthropic`` SDKs takes most of a second, which a daemon must not
spend before it answers ``/v1/health`` (issue 13 §3). ``warm_up`` pays their first-call costs ahead of
the first model call, off the event loop."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Literal, TypeAlias, assert_never

from openwork_core.models.adapters.request_invariants import (
    conversation_violations,
    prefix_violations,
    request_violations,
)
from openwork_core.models.adapters.scripted import (
    ScriptedModel,
    ScriptedResponse,
    ScriptedStep,
    ScriptedToolCall,
    ScriptExhausted,
    scripted_events,
)
from openwork_core.models.adapters.warm_up import warm_up
from openwork_core.models.port import ModelPort
from openwork_core.storage.records import ProviderRecord

if TYPE_CHECKING:
    from openwork_core.models.adapters.anthropic import AnthropicAdapter
    from openwork_core.models.adapters.openai_chat import MaxTokensField, OpenAIChatAdapter
    from openwork_core.models.adapters.openai_responses import OpenAIResponsesAdapter

AdapterKind: TypeAlias = Literal["openai-chat", "openai-responses", "anthropic", "scripted"]

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"


def build_model_port(kind: AdapterKind, base_url: str | None, api_key: str | None) -> ModelPort:
    """The adapter for ``OPENWORK_PROVIDER`` (daemon-api.md §1). ``base_url`` includes the
    version path for OpenAI (``…/v1``) and excludes it for Anthropic (the SDK adds ``/v1``);
    ``None`` uses the vendor's default. ``scripted`` returns an empty ``ScriptedModel`` (tests
    push steps into it)."""
    match kind:
        case "openai-chat":
            from openwork_core.models.adapters.openai_chat import OpenAIChatAdapter

            return OpenAIChatAdapter(base_url=base_url or OPENAI_DEFAULT_BASE_URL, api_key=api_key)
        case "openai-responses":
            from openwork_core.models.adapters.openai_responses import OpenAIResponsesAdapter

            return OpenAIResponsesAdapter(
                base_url=base_url or OPENAI_DEFAULT_BASE_URL, api_key=api_key
            )
        case "anthropic":
            from openwork_core.models.adapters.anthropic import AnthropicAdapter

            return AnthropicAdapter(base_url=base_url, api_key=api_key)
        case "scripted":
            return ScriptedModel()
        case _:
            assert_never(kind)


def model_port_for(provider: ProviderRecord, api_key: str | None) -> ModelPort:
    """The model port of a stored provider: its kind picks the official-SDK adapter."""
    return build_model_port(provider.kind.value, provider.base_url, api_key)


_LAZY = {
    "AnthropicAdapter": "openwork_core.models.adapters.anthropic",
    "MaxTokensField": "openwork_core.models.adapters.openai_chat",
    "OpenAIChatAdapter": "openwork_core.models.adapters.openai_chat",
    "OpenAIResponsesAdapter": "openwork_core.models.adapters.openai_responses",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "OPENAI_DEFAULT_BASE_URL",
    "AdapterKind",
    "AnthropicAdapter",
    "MaxTokensField",
    "OpenAIChatAdapter",
    "OpenAIResponsesAdapter",
    "ScriptExhausted",
    "ScriptedModel",
    "ScriptedResponse",
    "ScriptedStep",
    "ScriptedToolCall",
    "build_model_port",
    "conversation_violations",
    "model_port_for",
    "prefix_violations",
    "request_violations",
    "scripted_events",
    "warm_up",
]
