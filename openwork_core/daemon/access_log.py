"""One access-log line per HTTP request: method, route template, status, duration.

Never the path's ids, the query, a header or a body (the token and prompts stay out of the logs);
an unmatched path is logged as ``<unmatched>``. Pure ASGI so that event streams are logged when
they end, with the time they stayed open."""

from __future__ import annotations

import time

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = structlog.get_logger("openwork_core.daemon.access")

UNMATCHED_ROUTE = "<unmatched>"


def route_template(scope: Scope) -> str:
    """The matched route's path template (``/v1/sessions/{sid}``), else ``<unmatched>``."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else UNMATCHED_ROUTE


class AccessLog:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        status = 0

        async def observed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, observed)
        finally:
            log.info(
                "http.request",
                method=scope["method"],
                route=route_template(scope),
                status=status,  # 0: the client left before a response started
                duration_ms=int((time.monotonic() - started) * 1000),
            )
