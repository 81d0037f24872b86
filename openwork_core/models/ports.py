"""The model port of a stored provider: its kind picks the official-SDK adapter."""

from __future__ import annotations

from openwork_core.models.adapters import build_model_port
from openwork_core.models.port import ModelPort
from openwork_core.storage.records import ProviderRecord


def model_port_for(provider: ProviderRecord, api_key: str | None) -> ModelPort:
    return build_model_port(provider.kind.value, provider.base_url, api_key)
