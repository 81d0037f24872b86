"""A provider's error answer is read to at most ``MAX_ERROR_BODY_BYTES`` (issue 22 point 6; the
provider is untrusted), over loopback with each SDK: a 400 whose body is 32 MiB ends the call
as that 400, and the server could hand over only what the bound and the sockets' buffers hold
before the adapter closed the connection (on the old transport it handed over all of it, and
the daemon's memory grew by several times the body)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from openwork_chat_state.messages import user_text
from openwork_core.models.adapters.anthropic import AnthropicAdapter
from openwork_core.models.adapters.error_body import MAX_ERROR_BODY_BYTES
from openwork_core.models.adapters.openai_chat import OpenAIChatAdapter
from openwork_core.models.adapters.openai_responses import OpenAIResponsesAdapter
from openwork_core.models.port import ModelError, ModelRequest
from tests.integration.models.loopback import SYSTEM, failure
from tests.support.loopback_server import loopback_server

BODY_BYTES = 32 * 1024 * 1024
PIECE = b"x" * (64 * 1024)


@asynccontextmanager
async def _huge_errors(sent: list[int], done: asyncio.Event) -> AsyncIterator[str]:
    """Answers every request 400 with a 32 MiB JSON error; appends the bytes of body it got
    to write before the client went away, then sets ``done``."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        written = 0
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = [
                line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
            ]
            if length:
                await reader.readexactly(int(length[0].split(b":")[1]))
            opening = b'{"error": {"type": "invalid_request_error", "message": "'
            closing = b'"}}'
            writer.write(
                b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n"
                b"content-length: %d\r\n\r\n%s" % (BODY_BYTES, opening)
            )
            written = len(opening)
            while written < BODY_BYTES - len(closing):
                piece = PIECE[: BODY_BYTES - len(closing) - written]
                writer.write(piece)
                await writer.drain()
                written += len(piece)
            writer.write(closing)
            await writer.drain()
            written += len(closing)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            sent.append(written)
            writer.close()
            done.set()

    async with loopback_server(answer) as url:
        yield url


Adapter = OpenAIChatAdapter | OpenAIResponsesAdapter | AnthropicAdapter
ADAPTERS: dict[str, Callable[[str], Adapter]] = {
    "openai-chat": lambda url: OpenAIChatAdapter(base_url=f"{url}/v1", api_key="k"),
    "openai-responses": lambda url: OpenAIResponsesAdapter(base_url=f"{url}/v1", api_key="k"),
    "anthropic": lambda url: AnthropicAdapter(base_url=url, api_key="k"),
}


async def _call_fails(kind: str, url: str) -> ModelError:
    """One model call of the ``kind`` adapter to ``url``; the error that ends it."""
    port = ADAPTERS[kind](url)
    try:
        request = ModelRequest(
            model="m", messages=(SYSTEM, user_text("hi")), tools=(), max_output_tokens=100
        )
        _, error = await failure(port, request)
    finally:
        await port.aclose()
    return error


@pytest.mark.parametrize("kind", ADAPTERS)
async def test_a_32_mib_error_body_is_read_to_the_bound(kind: str) -> None:
    sent: list[int] = []
    done = asyncio.Event()
    async with _huge_errors(sent, done) as url:
        error = await _call_fails(kind, url)
        async with asyncio.timeout(30):  # the server sees the connection go
            await done.wait()
    assert error.http_status == 400, error
    assert len(sent) == 1 and sent[0] < MAX_ERROR_BODY_BYTES + 16 * 1024 * 1024 < BODY_BYTES


@pytest.mark.parametrize("kind", ADAPTERS)
async def test_the_environments_proxy_is_still_used(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bounded transport is mounted for every URL rather than given as the client's
    transport: httpx ignores ``HTTP_PROXY`` when a client has its own transport, so users behind
    a proxy would have lost their provider. The request for a host that does not resolve goes
    to the proxy, as the SDK's own client sends it."""
    seen: list[bytes] = []
    done = asyncio.Event()

    async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await reader.readuntil(b"\r\n"))
        writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}")
        await writer.drain()
        writer.close()
        done.set()

    async with loopback_server(proxy) as url:
        monkeypatch.setenv("HTTP_PROXY", url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        error = await _call_fails(kind, "http://provider.invalid")
        async with asyncio.timeout(30):
            await done.wait()
    assert error.http_status == 400, error
    assert seen[0].startswith(b"POST http://provider.invalid/"), seen
