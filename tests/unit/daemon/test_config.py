"""Daemon settings from the environment (daemon-api.md §1)."""

from __future__ import annotations

import pytest

from openwork_core.config import OpenWorkSettings
from openwork_core.models.capabilities import CapabilityError, resolve_capabilities
from openwork_core.storage.records import ProviderKind


def test_the_default_provider_names_the_key_variable_and_never_holds_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENWORK_PROVIDER", "openai-chat")
    monkeypatch.setenv("OPENWORK_PROVIDER_API_KEY", "secret-value")
    monkeypatch.setenv("OPENWORK_MODEL", "qwen3")
    provider = OpenWorkSettings().default_provider()
    assert provider is not None
    assert (provider.id, provider.kind, provider.api_key_env) == (
        "default",
        ProviderKind.OPENAI_CHAT,
        "OPENWORK_PROVIDER_API_KEY",
    )
    assert "secret-value" not in repr(provider)
    assert (provider.models[0].context_window, provider.models[0].max_output_tokens) == (
        None,
        None,
    ), "no numbers given: the catalog decides (issue 14 point 8)"
    caps = resolve_capabilities(provider.models[0], provider.settings).capabilities
    assert (caps.context_window_tokens, caps.max_output_tokens) == (40_960, 16_384)


def test_without_openwork_provider_there_is_no_default_provider(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENWORK_PROVIDER", raising=False)
    assert OpenWorkSettings().default_provider() is None


def test_a_reserve_that_fills_the_window_fails_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """model-providers.md §4: output + reasoning must be less than the window."""
    monkeypatch.setenv("OPENWORK_PROVIDER", "openai-chat")
    monkeypatch.setenv("OPENWORK_MODEL", "tiny")
    monkeypatch.setenv("OPENWORK_MODEL_CONTEXT_WINDOW", "4000")
    monkeypatch.setenv("OPENWORK_MODEL_MAX_OUTPUT_TOKENS", "4000")
    with pytest.raises(CapabilityError):
        OpenWorkSettings().default_provider()


def test_listen_parses_host_and_port() -> None:
    assert OpenWorkSettings(listen="127.0.0.1:0").listen_host_port == ("127.0.0.1", 0)
    assert OpenWorkSettings(listen="[::1]:7420").listen_host_port == ("::1", 7420)
