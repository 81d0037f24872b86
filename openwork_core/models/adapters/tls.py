"""One TLS context per process for the SDK clients (issue 13 §3: the first model call no slower
than the second).

httpx builds an ``ssl.SSLContext`` for every client it makes, and loading the CA bundle into it
costs 20–50 ms — on the event loop, when a session first resolves its provider (and again after
each key rotation builds a new port). The adapters give the SDKs a client on this shared context
(an ``SSLContext`` is made to be shared), built once: by the warm-up, in its thread. Each is
built by the SDK's own transport library with its defaults (certifi, or ``SSL_CERT_FILE`` /
``SSL_CERT_DIR`` from the environment), so a client verifies exactly what it did before."""

from __future__ import annotations

import functools
import ssl

import httpx
import httpx2


@functools.cache
def httpx_tls() -> ssl.SSLContext:
    """For the ``openai`` SDK (httpx)."""
    return httpx.create_ssl_context()


@functools.cache
def httpx2_tls() -> ssl.SSLContext:
    """For the ``anthropic`` SDK (httpx2)."""
    return httpx2.create_ssl_context()
