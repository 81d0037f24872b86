"""Model ports per provider kind (the official SDK adapters)."""

from __future__ import annotations

from openwork_core.models.adapters.openai_chat import OpenAIChatAdapter
from openwork_core.models.port import ModelPort
from openwork_core.session.errors import NoProvider
from openwork_core.storage.records import ProviderKind, ProviderRecord


def model_port_for(provider: ProviderRecord, api_key: str | None) -> ModelPort:
    match provider.kind:
        case ProviderKind.OPENAI_CHAT:
            return OpenAIChatAdapter(
                base_url=provider.base_url or "https://api.openai.com/v1", api_key=api_key
            )
        case _:
            raise NoProvider(f"provider kind {provider.kind.value} is not available yet")
