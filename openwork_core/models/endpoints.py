"""Provider base URLs, normalised once (issue 14 point 2; docs/providers.md "Base URLs").

Users paste a server's address with or without the API version path and with or without trailing
slashes: ``http://localhost:11434``, ``http://localhost:11434/``, ``http://localhost:11434/v1``,
``https://api.anthropic.com/v1/``. The SDKs disagree on what they want: the ``openai`` SDK appends
``/chat/completions`` or ``/responses`` to a base that already ends in ``/v1``; the ``anthropic``
SDK appends ``/v1/messages`` to a base without it. ``sdk_base_url`` gives each SDK its form;
``server_root`` is the address without the version path (the local servers' own endpoints such
as Ollama's ``/api/show`` or llama.cpp's ``/props`` live there). Pure functions.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

ProtocolKind: TypeAlias = Literal["openai-chat", "openai-responses", "anthropic"]

OPENAI_DEFAULT_ROOT = "https://api.openai.com"
ANTHROPIC_DEFAULT_ROOT = "https://api.anthropic.com"

_VERSION = "/v1"


def server_root(base_url: str) -> str:
    """``base_url`` without trailing slashes and without one trailing ``/v1`` path segment."""
    root = base_url.strip().rstrip("/")
    if root.lower().endswith(_VERSION):
        root = root[: -len(_VERSION)].rstrip("/")
    return root


def default_root(kind: ProtocolKind) -> str:
    return ANTHROPIC_DEFAULT_ROOT if kind == "anthropic" else OPENAI_DEFAULT_ROOT


def sdk_base_url(kind: ProtocolKind, base_url: str | None) -> str:
    """The base URL the kind's SDK wants: ``…/v1`` for both OpenAI kinds, the root for
    Anthropic. ``None`` (or blank) is the vendor's public endpoint."""
    root = server_root(base_url) if base_url and base_url.strip() else default_root(kind)
    return root if kind == "anthropic" else f"{root}{_VERSION}"
