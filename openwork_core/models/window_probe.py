"""Asks a local server which window it serves (issue 14 point 8): the four servers' endpoints
(``served_window``) at once, each bounded by a short timeout; the first in the order llama.cpp,
Ollama, LM Studio, vLLM that answers a window wins. Any failure is "not known" (debug log):
a probe never fails anything. Runs in the background (``ProviderRuntime``), never on the start
path; ``httpx`` (which pulls in the terminal libraries the CLI installs) is imported in a thread
by the first probe, off the event loop, not when the daemon starts."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import orjson
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
"""Each of the four questions, whole (connection, answer and body)."""
MAX_ANSWER_BYTES = 4 * 1024 * 1024
"""An answer to read at most: Ollama's ``/api/show`` with a long license is some 50 KB."""

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
            request: httpx.Request,
            window: Callable[[object], int | None],
            tools: Callable[[object], bool | None] = lambda _body: None,
        ) -> ServedWindow | None:
            try:
                async with asyncio.timeout(timeout_s):  # httpx's timeout is per read
                    body = await _bounded_json(client, request)
                tokens = None if body is None else window(body)
            except Exception as exc:  # any failure (HTTP, an invalid URL, a bad body): unknown
                log.debug("window_probe.no_answer", server=server, error=type(exc).__name__)
                return None
            return None if tokens is None else ServedWindow(server, tokens, tools(body))

        def request(method: str, path: str, **json: object) -> httpx.Request:
            return client.build_request(method, f"{root}{path}", json=json or None)

        answers = await asyncio.gather(
            ask("llama.cpp", request("GET", "/props"), llamacpp_window, llamacpp_tools),
            ask("ollama", request("POST", "/api/show", model=model), ollama_window, ollama_tools),
            ask(
                "lm-studio",
                request("GET", "/api/v0/models"),
                lambda body: lmstudio_window(body, model),
                lambda body: lmstudio_tools(body, model),
            ),
            ask("vllm", request("GET", "/v1/models"), lambda body: vllm_window(body, model)),
        )
    return next((answer for answer in answers if answer is not None), None)


async def _bounded_json(client: httpx.AsyncClient, request: httpx.Request) -> object | None:
    """The answer's JSON when it is a 200 of at most ``MAX_ANSWER_BYTES``; the server is
    untrusted, so a longer answer is not read to its end."""
    response = await client.send(request, stream=True)
    try:
        if response.status_code != 200:
            return None
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_ANSWER_BYTES:
                raise ValueError(f"an answer over {MAX_ANSWER_BYTES} bytes")
        parsed: object = orjson.loads(body)
        return parsed
    finally:
        await response.aclose()
