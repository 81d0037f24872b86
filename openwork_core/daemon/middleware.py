"""Pure ASGI middleware of the envelope and the body bound (docs/reliability.md "One envelope
everywhere", "Bounds"). Pure ASGI so that neither buffers a body nor a streaming response."""

from __future__ import annotations

import uuid

import structlog
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from openwork_core.daemon.errors import (
    InternalError,
    PayloadTooLarge,
    error_response,
    unavailable_response,
)
from openwork_core.storage.errors import database_unavailable

log = structlog.get_logger(__name__)


class _BodyTooLarge(StarletteHTTPException):
    """Raised from ``receive`` once a chunked body passes the bound. An ``HTTPException`` so
    that FastAPI's body parsing re-raises it as it is (it wraps any other error in a 400)."""

    def __init__(self) -> None:
        super().__init__(status_code=PayloadTooLarge.http_status)


class EnvelopeMiddleware:
    """Outermost: gives each request an id (``X-Request-Id``) and turns an exception nobody
    handled into 500 ``internal_error`` with that id; the log line has the traceback."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = f"req_{uuid.uuid4().hex}"
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", []))
                headers.append((b"x-request-id", request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except _BodyTooLarge:
            if not started:
                await _too_large(scope, receive, send_with_id)
        except Exception as exc:
            if database_unavailable(exc):
                log.warning("request.database_unavailable", request_id=request_id)
                if not started:
                    await unavailable_response()(scope, receive, send_with_id)
                return
            log.exception(
                "request.unhandled",
                request_id=request_id,
                method=scope.get("method"),
                path=scope.get("path"),
            )
            if not started:
                await error_response(
                    InternalError.http_status,
                    InternalError.code,
                    "internal error",
                    {"request_id": request_id},
                )(scope, receive, send_with_id)


async def _too_large(scope: Scope, receive: Receive, send: Send) -> None:
    response = error_response(
        PayloadTooLarge.http_status,
        PayloadTooLarge.code,
        "the request body is over the daemon's limit (OPENWORK_MAX_BODY_BYTES)",
    )
    response.headers["connection"] = "close"
    await response(scope, receive, send)


class BodyLimitMiddleware:
    """Refuses a body over ``max_bytes`` with 413 ``payload_too_large``: at once when its
    Content-Length says so, otherwise as soon as the chunks read so far pass the bound. Nothing
    is buffered here; the route never sees a body over the bound."""

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self._max = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for key, value in scope["headers"]:
            if key == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = self._max + 1
                if declared > self._max:
                    await _too_large(scope, receive, send)
                    return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self._max:
                    raise _BodyTooLarge()
            return message

        await self.app(scope, counted, send)
