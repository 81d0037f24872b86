"""The error envelope: {"error": {"code", "message", ...extra}} (daemon-api.md §2), and the one
exception handler: every product error is an ``OpenWorkError`` that carries its ``code`` and
``http_status`` (docs/architecture.md "Errors"), so no route maps errors itself."""

from __future__ import annotations

from typing import ClassVar, cast

import asyncpg
import orjson
import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import ConfigDict, Field, JsonValue
from pydantic.config import JsonDict
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from openwork_chat_state.error_root import InvalidRequest, NotFound, OpenWorkError
from openwork_core.body import UNSTORABLE_TEXT, Body
from openwork_core.daemon.validation import UNKNOWN_ID
from openwork_core.storage.codec import storable_json
from openwork_core.storage.errors import database_unavailable

log = structlog.get_logger(__name__)


class JsonBytes(Response):
    media_type = "application/json"

    def render(self, content: object) -> bytes:
        if isinstance(content, bytes):
            return content
        try:
            return orjson.dumps(content)
        except orjson.JSONEncodeError:  # a lone surrogate: escaped as the storage rule does
            return orjson.dumps(storable_json(cast(JsonValue, content)))


SOMETIMES: JsonDict = {"x-sometimes-present": True}
"""``json_schema_extra`` of a response field that is left out unless it applies (the OpenAPI
document requires every other response field; the marker is removed from it)."""


class FieldErrorBody(Body):
    loc: list[str] = Field(description="where: body, query, path or header, then the field")
    msg: str


class ErrorDetail(Body):
    """The error of every non-2xx answer: ``code`` and ``message``, and the fields of the codes
    that carry more (each left out otherwise)."""

    model_config = ConfigDict(extra="forbid")
    code: str = Field(description="stable snake_case error code")
    message: str = Field(description="for humans")
    errors: list[FieldErrorBody] | None = Field(
        default=None,
        description="422 `invalid_request` and 400 `invalid_request` (unstorable text): the "
        "field errors",
        json_schema_extra=SOMETIMES,
    )
    turn_id: str | None = Field(
        default=None,
        description="409 `busy`: the Turn that runs",
        json_schema_extra=SOMETIMES,
    )
    owner_url: str | None = Field(
        default=None,
        description="409 `session_owned_elsewhere`: the daemon that drives the session",
        json_schema_extra=SOMETIMES,
    )
    request_id: str | None = Field(
        default=None,
        description="500 `internal_error`: the id of the log line `request.unhandled`",
        json_schema_extra=SOMETIMES,
    )


class ErrorEnvelope(Body):
    """Every non-2xx answer of the daemon (daemon-api.md §2): ``{"error": {"code", "message",
    ...}}``."""

    error: ErrorDetail


def error_response(
    status: int, code: str, message: str, extra: dict[str, JsonValue] | None = None
) -> JsonBytes:
    body: dict[str, JsonValue] = {"code": code, "message": message, **(extra or {})}
    return JsonBytes({"error": body}, status_code=status)


def response_for(exc: OpenWorkError) -> JsonBytes:
    """The envelope of a product error: its own status, code, message and extra fields; any
    error caused by the database being unreachable is 503 ``service_unavailable`` (issue 12
    point 1: an outage, not a refusal of this request)."""
    if database_unavailable(exc):
        return unavailable_response()
    return error_response(exc.http_status, exc.code, exc.public_message, exc.envelope_extra())


def unavailable_response() -> JsonBytes:
    return error_response(
        ServiceUnavailable.http_status,
        ServiceUnavailable.code,
        "the database is unavailable; retry",
    )


# -- errors of the HTTP layer itself ------------------------------------------------------------


class InvalidBody(InvalidRequest):
    """A body, path or query parameter that fails its schema (daemon-api.md §2: 422)."""

    http_status = 422


class PayloadTooLarge(OpenWorkError):
    """The request body is over ``OPENWORK_MAX_BODY_BYTES`` (reliability.md "Bounds")."""

    code = "payload_too_large"
    http_status = 413


class MethodNotAllowed(OpenWorkError):
    code = "method_not_allowed"
    http_status = 405


class HttpError(OpenWorkError):
    """Any other status the framework raises; the status is the framework's."""

    code = "http_error"


class ServiceUnavailable(OpenWorkError):
    """The database cannot be reached (an outage); the request may be retried."""

    code = "service_unavailable"
    http_status = 503


class InternalError(OpenWorkError):
    """An exception nobody expected: 500 with the request id, the traceback only in the log."""

    code = "internal_error"
    http_status: ClassVar[int] = 500


def _field_errors(exc: RequestValidationError) -> list[JsonValue]:
    return [
        {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", ""))}
        for e in exc.errors()
    ]


def validation_response(exc: RequestValidationError) -> JsonBytes:
    """Unstorable text → 400, an id that cannot exist → 404, any other field error → 422."""
    kinds = {str(e.get("type", "")) for e in exc.errors()}
    errors = _field_errors(exc)
    if UNSTORABLE_TEXT in kinds:
        return error_response(
            InvalidRequest.http_status,
            InvalidRequest.code,
            "the request holds text that cannot be stored (U+0000 or a lone surrogate)",
            {"errors": errors},
        )
    if kinds == {UNKNOWN_ID}:
        return error_response(NotFound.http_status, NotFound.code, "no such id")
    return error_response(
        InvalidBody.http_status, InvalidBody.code, "the request body is invalid", {"errors": errors}
    )


def http_error_response(exc: StarletteHTTPException) -> JsonBytes:
    if exc.status_code == 400:  # the framework could not read the body at all
        return error_response(400, InvalidRequest.code, "the request body cannot be read")
    if exc.status_code == 404:
        return error_response(404, NotFound.code, "no such route")
    if exc.status_code == 405:
        return error_response(405, MethodNotAllowed.code, "method not allowed")
    if exc.status_code == PayloadTooLarge.http_status:
        return error_response(
            PayloadTooLarge.http_status,
            PayloadTooLarge.code,
            "the request body is over the daemon's limit (OPENWORK_MAX_BODY_BYTES)",
        )
    return error_response(exc.status_code, HttpError.code, "the request cannot be served")


def install_error_handlers(app: FastAPI) -> None:
    """The one handler per kind: product errors, validation errors, framework HTTP errors."""

    @app.exception_handler(OpenWorkError)
    async def _product(_request: Request, exc: OpenWorkError) -> Response:
        if exc.http_status >= 500:
            log.warning("request.failed", code=exc.code, error=str(exc)[:500])
        return response_for(exc)

    for library_error in (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):

        @app.exception_handler(library_error)
        async def _library(_request: Request, exc: Exception) -> Response:
            """An outage answers 503; any other library error is not ours to explain: re-raised
            to ``EnvelopeMiddleware`` (500 ``internal_error``, the traceback in the log)."""
            if database_unavailable(exc):
                log.warning("request.database_unavailable", error=str(exc)[:500])
                return unavailable_response()
            raise exc

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> Response:
        return validation_response(exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> Response:
        return http_error_response(exc)
