"""A provider's error answer, read to at most ``MAX_ERROR_BODY_BYTES`` (issue 22 point 6).

The provider is untrusted. Its streamed output is bounded as it arrives (``streaming.py``,
``sse.py``), but an error answer (4xx, 5xx) is read whole by the SDK to build its exception: a
50 MB error body took the daemon from 100 MB to 350 MB. The SDKs' HTTP clients get a transport
that hands an error answer's body on cut at the bound (what the SDK parses then is its first
megabyte: the error's code and message come first); a success answer passes untouched, so the
streamed path is the same objects as before. One shape for each HTTP library: ``httpx`` (the
``openai`` SDK) and ``httpx2`` (the ``anthropic`` SDK).

The transport is mounted for every URL (``mounts={"all://": …}``), not given as the client's
``transport``: httpx ignores ``HTTP_PROXY``/``HTTPS_PROXY`` for a client with its own transport.
A request the environment routes through a proxy (or past one, by ``NO_PROXY``) goes through
httpx's own transport, whose error bodies are not cut.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import httpx2

from openwork_core.models.adapters.tls import httpx2_tls, httpx_tls

MAX_ERROR_BODY_BYTES = 1024 * 1024
"""An error answer's body at most; the rest is never read (the connection is not reused)."""


class _Capped:
    """The first ``MAX_ERROR_BODY_BYTES`` of a body stream."""

    def __init__(self, inner: httpx.AsyncByteStream | httpx2.AsyncByteStream) -> None:
        self._inner = inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        left = MAX_ERROR_BODY_BYTES
        async for chunk in self._inner:
            yield chunk[:left]
            left -= len(chunk)
            if left <= 0:
                return

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CappedHttpx(_Capped, httpx.AsyncByteStream):
    pass


class _CappedHttpx2(_Capped, httpx2.AsyncByteStream):
    pass


class _HttpxTransport(httpx.AsyncHTTPTransport):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        stream = response.stream
        if response.status_code < 400 or not isinstance(stream, httpx.AsyncByteStream):
            return response
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_CappedHttpx(stream),
            extensions=response.extensions,
            request=request,
        )


class _Httpx2Transport(httpx2.AsyncHTTPTransport):
    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await super().handle_async_request(request)
        stream = response.stream
        if response.status_code < 400 or not isinstance(stream, httpx2.AsyncByteStream):
            return response
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_CappedHttpx2(stream),
            extensions=response.extensions,
            request=request,
        )


def httpx_transport() -> httpx.AsyncHTTPTransport:
    """For the ``openai`` SDK's client: its TLS, the SDK's connection limits."""
    limits = httpx.Limits(max_connections=1000, max_keepalive_connections=100)
    return _HttpxTransport(verify=httpx_tls(), limits=limits)


def httpx2_transport() -> httpx2.AsyncHTTPTransport:
    """For the ``anthropic`` SDK's client: its TLS, the SDK's connection limits."""
    limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
    return _Httpx2Transport(verify=httpx2_tls(), limits=limits)
