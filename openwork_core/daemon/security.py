"""Request guards (daemon-api.md §2): bearer token, loopback Host, Origin allow-list."""

from __future__ import annotations

import hmac
import ipaddress

from starlette.types import ASGIApp, Receive, Scope, Send

from openwork_core.daemon.errors import error_response

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
_PUBLIC_PATHS = frozenset({"/v1/health", "/v1/openapi.json", "/ui"})
_PUBLIC_PREFIXES = ("/ui/",)
"""The health check, the OpenAPI document and the static context page (whose own API requests
carry the token); the Host and Origin rules still apply to them."""


def is_public_path(path: str) -> bool:
    return path in _PUBLIC_PATHS or path.startswith(_PUBLIC_PREFIXES)


def host_is_loopback(host_header: str) -> bool:
    host = host_header.strip()
    if host.startswith("["):
        host = host[1 : host.find("]")] if "]" in host else host[1:]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    host = host.lower().rstrip(".")
    if host in _LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class SecurityMiddleware:
    """Pure ASGI so that it also guards streaming (SSE) responses."""

    def __init__(
        self, app: ASGIApp, *, token: str, allowed_origins: frozenset[str], allow_remote: bool
    ) -> None:
        self.app = app
        self._token = token.encode()
        self._origins = allowed_origins
        self._allow_remote = allow_remote

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if not self._allow_remote and not host_is_loopback(headers.get("host", "")):
            await error_response(403, "forbidden_host", "requests must use a loopback Host")(
                scope, receive, send
            )
            return
        origin = headers.get("origin")
        if origin is not None and origin not in self._origins:
            await error_response(403, "forbidden_origin", f"origin not allowed: {origin}")(
                scope, receive, send
            )
            return
        if not is_public_path(scope["path"]):
            auth = headers.get("authorization", "")
            scheme, _, credential = auth.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                credential.strip().encode(), self._token
            ):
                await error_response(401, "unauthorized", "a valid bearer token is required")(
                    scope, receive, send
                )
                return
        await self.app(scope, receive, send)
