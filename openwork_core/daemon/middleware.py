"""Pure ASGI middleware of the envelope and the body bound (docs/reliability.md "One envelope
everywhere", "Bounds"). Pure ASGI so that neither buffers a body nor a streaming response."""

from __future__ import annotations

import asyncio
import contextlib
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


LINGER_MAX_BYTES = 64 * 1024 * 1024
"""After a 413, at most this much of the rest of the body is read and discarded."""
LINGER_IDLE_S = 5.0
LINGER_TOTAL_S = 30.0


async def _too_large(scope: Scope, receive: Receive, send: Send) -> None:
    """413 ``payload_too_large``, then a lingering close (as nginx does): the answer is sent in
    full at once, but the response is completed — and the connection closed — only after the
    rest of the body was read and discarded (up to ``LINGER_MAX_BYTES``, ``LINGER_TOTAL_S``, a
    chunk at least every ``LINGER_IDLE_S``). A client that writes its whole body before it reads
    (Python's urllib, Node's http) then reads the 413 instead of a connection reset: closing a
    socket with unread data makes the kernel send RST. A client waiting on ``Expect:
    100-continue`` sent no body: nothing to wait for."""
    response = error_response(
        PayloadTooLarge.http_status,
        PayloadTooLarge.code,
        "the request body is over the daemon's limit (OPENWORK_MAX_BODY_BYTES)",
    )
    response.headers["connection"] = "close"
    await send({"type": "http.response.start", "status": 413, "headers": response.raw_headers})
    await send({"type": "http.response.body", "body": response.body, "more_body": True})
    if (b"expect", b"100-continue") not in [(k, v.lower()) for k, v in scope["headers"]]:
        await _discard_body(receive)
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _discard_body(receive: Receive) -> None:
    discarded = 0
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(LINGER_TOTAL_S):
            while discarded <= LINGER_MAX_BYTES:
                async with asyncio.timeout(LINGER_IDLE_S):
                    message = await receive()
                if message["type"] != "http.request":
                    return  # the client went away
                discarded += len(message.get("body", b""))
                if not message.get("more_body", False):
                    return


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
