"""Base URLs with or without ``/v1`` and trailing slashes work for every kind (issue 14 point 2;
docs/providers.md "Base URLs"): normalised once, each SDK gets its form."""

from __future__ import annotations

import pytest

from openwork_core.models.adapters import build_model_port
from openwork_core.models.endpoints import sdk_base_url, server_root

FORMS = [
    "http://127.0.0.1:8080",
    "http://127.0.0.1:8080/",
    "http://127.0.0.1:8080/v1",
    "http://127.0.0.1:8080/v1/",
    "http://127.0.0.1:8080/v1//",
    "  http://127.0.0.1:8080/V1 ",
]


@pytest.mark.parametrize("base_url", FORMS)
def test_every_form_of_a_base_url_has_the_same_server_root(base_url: str) -> None:
    assert server_root(base_url) == "http://127.0.0.1:8080"


@pytest.mark.parametrize("base_url", FORMS)
def test_the_openai_kinds_get_the_version_path_and_anthropic_gets_the_root(base_url: str) -> None:
    assert sdk_base_url("openai-chat", base_url) == "http://127.0.0.1:8080/v1"
    assert sdk_base_url("openai-responses", base_url) == "http://127.0.0.1:8080/v1"
    assert sdk_base_url("anthropic", base_url) == "http://127.0.0.1:8080"


def test_a_path_prefix_before_the_version_is_kept() -> None:
    """Azure-style and proxy prefixes: only one trailing ``/v1`` segment is the version."""
    assert server_root("https://proxy.example/openai/v1") == "https://proxy.example/openai"
    assert sdk_base_url("anthropic", "https://proxy.example/anthropic/") == (
        "https://proxy.example/anthropic"
    )
    assert server_root("https://host.example/apiv1") == "https://host.example/apiv1"


@pytest.mark.parametrize("base_url", [None, "", "   "])
def test_no_base_url_is_the_vendors_public_endpoint(base_url: str | None) -> None:
    assert sdk_base_url("openai-chat", base_url) == "https://api.openai.com/v1"
    assert sdk_base_url("anthropic", base_url) == "https://api.anthropic.com"


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("openai-chat", "http://127.0.0.1:9/v1/"),
        ("openai-responses", "http://127.0.0.1:9/v1/"),
        ("anthropic", "http://127.0.0.1:9"),
    ],
)
def test_build_model_port_gives_each_sdk_its_form_whatever_was_configured(
    kind: str, expected: str
) -> None:
    for form in ("http://127.0.0.1:9", "http://127.0.0.1:9/v1/"):
        port = build_model_port(kind, form, None)  # type: ignore[arg-type]
        assert str(port._client.base_url).rstrip("/") == expected.rstrip("/")  # type: ignore[union-attr]
