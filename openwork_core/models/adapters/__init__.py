"""Model adapters: one ``ModelPort`` per wire protocol, on the official SDKs, and the scripted
port for in-process tests (model-providers.md §5; docs/providers.md).

This package is part of the session runtime (``runtime.py``), which the daemon imports
after it listens. A provider kind's adapter, and with it its SDK, is imported by the first
``build_model_port`` of that kind (the ``match`` below, the runtime's only imports by kind): a
daemon on ``openai-chat`` never loads ``anthropic`` (2.3 s of CPU and its share of the idle RSS on
a slow core). ``warm_up`` builds the configured kinds' adapters in the warm-up thread, so their
imports and first-call costs are paid there, off the event loop."""

from __future__ import annotations

from typing import Literal, TypeAlias, assert_never

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
from openwork_core.models.endpoints import sdk_base_url
from openwork_core.models.port import ModelPort
from openwork_core.storage.records import MaxTokensField, ProviderRecord, ProviderSettings

AdapterKind: TypeAlias = Literal["openai-chat", "openai-responses", "anthropic", "scripted"]

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"

DEFAULT_SETTINGS = ProviderSettings()


def build_model_port(
    kind: AdapterKind,
    base_url: str | None,
    api_key: str | None,
    settings: ProviderSettings = DEFAULT_SETTINGS,
) -> ModelPort:
    """The adapter for ``OPENWORK_PROVIDER`` (daemon-api.md §1). ``base_url`` may end in
    ``/v1`` or not, with or without trailing slashes: ``endpoints.sdk_base_url`` gives each SDK
    its form; ``None`` uses the vendor's default. ``scripted`` returns an empty
    ``ScriptedModel`` (tests push steps into it)."""
    match kind:
        case "openai-chat":
            from openwork_core.models.adapters.openai_chat import OpenAIChatAdapter

            return OpenAIChatAdapter(
                base_url=sdk_base_url(kind, base_url),
                api_key=api_key,
                max_tokens_field=settings.max_tokens_field,
                stream_usage=settings.stream_usage,
                reasoning_effort=settings.reasoning_effort,
            )
        case "openai-responses":
            from openwork_core.models.adapters.openai_responses import OpenAIResponsesAdapter

            return OpenAIResponsesAdapter(
                base_url=sdk_base_url(kind, base_url),
                api_key=api_key,
                reasoning_effort=settings.reasoning_effort,
            )
        case "anthropic":
            from openwork_core.models.adapters.anthropic import AnthropicAdapter

            return AnthropicAdapter(base_url=sdk_base_url(kind, base_url), api_key=api_key)
        case "scripted":
            return ScriptedModel()
        case _:
            assert_never(kind)


def model_port_for(provider: ProviderRecord, api_key: str | None) -> ModelPort:
    """The model port of a stored provider: its kind picks the official-SDK adapter."""
    return build_model_port(provider.kind.value, provider.base_url, api_key, provider.settings)


__all__ = [
    "OPENAI_DEFAULT_BASE_URL",
    "AdapterKind",
    "MaxTokensField",
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
]
