"""build_model_port: one adapter per OPENWORK_PROVIDER kind (daemon-api.md §1)."""

from __future__ import annotations

import pytest

from openwork_core.models.adapters import ScriptedModel, build_model_port
from openwork_core.models.adapters.anthropic import AnthropicAdapter
from openwork_core.models.adapters.openai_chat import OpenAIChatAdapter
from openwork_core.models.adapters.openai_responses import OpenAIResponsesAdapter


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("openai-chat", OpenAIChatAdapter),
        ("openai-responses", OpenAIResponsesAdapter),
        ("anthropic", AnthropicAdapter),
        ("scripted", ScriptedModel),
    ],
)
def test_each_provider_kind_builds_its_adapter(kind: str, expected: type) -> None:
    port = build_model_port(kind, "http://127.0.0.1:9/v1", "sk-secret")  # type: ignore[arg-type]
    assert isinstance(port, expected)


@pytest.mark.parametrize("kind", ["openai-chat", "openai-responses", "anthropic"])
def test_an_adapter_never_shows_its_api_key(kind: str) -> None:
    """daemon-api.md §1: the key is never logged; repr is what logs would show."""
    port = build_model_port(kind, "http://127.0.0.1:9/v1", "sk-secret")  # type: ignore[arg-type]
    assert "sk-secret" not in repr(port)


def test_no_api_key_never_falls_back_to_the_vendor_environment_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    port = build_model_port("openai-chat", "http://127.0.0.1:9/v1", None)
    assert isinstance(port, OpenAIChatAdapter)
    assert "sk-from-env" not in str(vars(port))
    assert port._client.api_key != "sk-from-env"
