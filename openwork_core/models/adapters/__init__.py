"""Model adapters: one ``ModelPort`` per wire protocol, on the official SDKs, and the scripted
port for in-process tests (model-providers.md §5; docs/providers.md)."""

from __future__ import annotations

from typing import Literal, TypeAlias, assert_never

from openwork_core.models.adapters.anthropic import AnthropicAdapter
from openwork_core.models.adapters.openai_chat import MaxTokensField, OpenAIChatAdapter
from openwork_core.models.adapters.openai_responses import OpenAIResponsesAdapter
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
from openwork_core.models.port import ModelPort
from openwork_core.storage.records import ProviderRecord

AdapterKind: TypeAlias = Literal["openai-chat", "openai-responses", "anthropic", "scripted"]

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"


def build_model_port(kind: AdapterKind, base_url: str | None, api_key: str | None) -> ModelPort:
    """The adapter for ``OPENWORK_PROVIDER`` (daemon-api.md §1). ``base_url`` includes the
    version path for OpenAI (``…/v1``) and excludes it for Anthropic (the SDK adds ``/v1``);
    ``None`` uses the vendor's default. ``scripted`` returns an empty ``ScriptedModel`` (tests
    push steps into it)."""
    match kind:
        case "openai-chat":
            return OpenAIChatAdapter(base_url=base_url or OPENAI_DEFAULT_BASE_URL, api_key=api_key)
        case "openai-responses":
            return OpenAIResponsesAdapter(
                base_url=base_url or OPENAI_DEFAULT_BASE_URL, api_key=api_key
            )
        case "anthropic":
            return AnthropicAdapter(base_url=base_url, api_key=api_key)
        case "scripted":
            return ScriptedModel()
        case _:
            assert_never(kind)


def model_port_for(provider: ProviderRecord, api_key: str | None) -> ModelPort:
    """The model port of a stored provider: its kind picks the official-SDK adapter."""
    return build_model_port(provider.kind.value, provider.base_url, api_key)


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
]
