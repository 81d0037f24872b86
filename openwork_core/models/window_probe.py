"""Asks a local server which window it serves (issue 14 point 8): the four servers' endpoints
(``served_window``) at once, each bounded by a short timeout; the first in the order llama.cpp,
Ollama, LM Studio, vLLM that answers a window wins. Any failure is "not known" (debug log):
a probe never fails anything. Runs in the background (``ProviderRuntime``), never on the start
path; ``httpx`` (which pulls in the terminal libraries the CLI installs) is imported in a thread
by the first probe, off the event loop, not when the daemon starts."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import structlog

from openwork_core.models.endpoints import server_root
from openwork_core.models.served_window import (
    ServedWindow,
    ServerKind,
    llamacpp_tools,
    llamacpp_window,
    lmstudio_tools,
    lmstudio_window,
    ollama_tools,
    ollama_window,
    vllm_window,
)
from openwork_core.storage.records import ProviderKind, ProviderRecord

if TYPE_CHECKING:
    import httpx

log = structlog.get_logger(__name__)

PROBE_TIMEOUT_S = 2.0

PUBLIC_HOSTS = frozenset({"api.openai.com", "api.anthropic.com", "api.deepseek.com"})
"""Vendor APIs: never probed (their windows are in the catalog)."""


def probes_window(provider: ProviderRecord) -> bool:
    """A provider whose server is asked: an OpenAI-compatible kind with a base URL that is not
    a vendor's public API, and ``probe_served_window`` on."""
    if not provider.settings.probe_served_window or provider.base_url is None:
        return False
    if provider.kind is ProviderKind.ANTHROPIC:
        return False
    try:
        parts = urlsplit(server_root(provider.base_url))
        host = parts.hostname
    except ValueError:  # not a URL (the PUT stores it as given): nothing to ask
        return False
    return parts.scheme in ("http", "https") and bool(host) and host not in PUBLIC_HOSTS


async def probe_served_window(
    base_url: str, model: str, *, timeout_s: float = PROBE_TIMEOUT_S
) -> ServedWindow | None:
    root = server_root(base_url)
    await asyncio.to_thread(importlib.import_module, "httpx")  # once: then in sys.modules
    import httpx

    async with httpx.AsyncClient(timeout=timeout_s, follow_redirects=False) as client:

        async def ask(
            server: ServerKind,
            call: Callable[[], Awaitable[httpx.Response]],
            window: Callable[[object], int | None],
            tools: Callable[[object], bool | None] = lambda _body: None,
        ) -> ServedWindow | None:
            try:
                response = await call()
                if response.status_code != 200:
                    return None
                body = response.json()
                tokens = window(body)
            except Exception as exc:  # any failure (HTTP, an invalid URL, a bad body): unknown
                log.debug("window_probe.no_answer", server=server, error=type(exc).__name__)
                return None
            return None if tokens is None else ServedWindow(server, tokens, tools(body))

        answers = await asyncio.gather(
            ask("llama.cpp", lambda: client.get(f"{root}/props"), llamacpp_window, llamacpp_tools),
            ask(
                "ollama",
                lambda: client.post(f"{root}/api/show", json={"model": model}),
                ollama_window,
                ollama_tools,
            ),
            ask(
                "lm-studio",
                lambda: client.get(f"{root}/api/v0/models"),
                lambda body: lmstudio_window(body, model),
                lambda body: lmstudio_tools(body, model),
            ),
            ask(
                "vllm",
                lambda: client.get(f"{root}/v1/models"),
                lambda body: vllm_window(body, model),
            ),
        )
    return next((answer for answer in answers if answer is not None), None)
