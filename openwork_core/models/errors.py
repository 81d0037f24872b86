"""Provider error classification (model-providers.md §3): pure functions, no SDK types.

A provider error becomes a ``ModelError`` by its provider error code first (the tables below, merged
across vendors), then by HTTP status. Context overflow is recognised by code only, never by message
text. ``Retry-After`` (seconds or HTTP date) and ``retry-after-ms`` become ``retry_after_ms``.
"""

from __future__ import annotations

import email.utils
import math
from collections.abc import Mapping
from datetime import UTC, datetime

from openwork_core.models.port import (
    DeliveryState,
    ErrorPhase,
    ModelError,
    ModelErrorKind,
    RetryHint,
)

_K = ModelErrorKind

_CODE_GROUPS: tuple[tuple[ModelErrorKind, tuple[str, ...]], ...] = (
    (_K.CONTEXT_OVERFLOW, ("context_length_exceeded", "exceeded_model_token_limit", "1215")),
    (
        _K.QUOTA_EXHAUSTED,
        (
            "insufficient_quota",
            "billing_hard_limit_reached",
            "usage_not_included",
            "exceeded_current_quota_error",
            "1113",
            *(str(n) for n in range(1308, 1312)),
            *(str(n) for n in range(1314, 1322)),
        ),
    ),
    (
        _K.RATE_LIMITED,
        ("rate_limit_exceeded", "rate_limit_error", "rate_limit_reached_error", "1302"),
    ),
    (
        _K.OVERLOADED,
        # ``overloaded_error`` is Anthropic's type (also sent as a mid-stream ``error`` event).
        (
            "server_is_overloaded",
            "slow_down",
            "engine_overloaded_error",
            "1305",
            "overloaded_error",
        ),
    ),
    (_K.AUTHENTICATION, ("invalid_api_key", "1000", "1001", "1003", "1005")),
    (_K.PERMISSION_DENIED, ("permission_denied_error", "1220")),
    (_K.INVALID_REQUEST, ("invalid_prompt", "1210", "1213", "1214", "1261")),
    (_K.MODEL_NOT_FOUND, ("model_not_found", "resource_not_found_error", "1211")),
    (_K.CAPABILITY_UNSUPPORTED, ("1212",)),
    (_K.CONTENT_FILTERED, ("content_filter", "1301")),
    (
        _K.SERVER_ERROR,
        # ``api_error`` is Anthropic's type for an internal error.
        (
            "server_error",
            "unexpected_output",
            "server_unavailable",
            "1200",
            "1230",
            "1234",
            "api_error",
        ),
    ),
    (_K.CANCELLED, ("client_closed_request",)),
)

PROVIDER_CODE_KINDS: Mapping[str, ModelErrorKind] = {
    code: kind for kind, codes in _CODE_GROUPS for code in codes
}
"""Every provider error code we recognise, merged across vendors (model-providers.md §3)."""

_RETRYABLE_KINDS = frozenset(
    {_K.RATE_LIMITED, _K.OVERLOADED, _K.SERVER_ERROR, _K.TIMEOUT, _K.NETWORK}
)


def provider_error_codes(body: object) -> tuple[str, ...]:
    """Candidate codes from an error body, most specific first: ``error.code``, ``error.type``,
    ``response.error.code`` / ``.type``, top-level ``code`` / ``type``. Numbers become strings."""
    found: list[str] = []

    def take(obj: object) -> None:
        if not isinstance(obj, Mapping):
            return
        for key in ("code", "type"):
            value = obj.get(key)
            if isinstance(value, bool):
                continue
            if isinstance(value, str | int) and str(value) and str(value) != "error":
                found.append(str(value)[:256])

    if isinstance(body, Mapping):
        take(body.get("error"))
        response = body.get("response")
        if isinstance(response, Mapping):
            take(response.get("error"))
        take(body)
    return tuple(dict.fromkeys(found))


def provider_error_message(body: object) -> str | None:
    """The human message of an error body (``error.message`` or top-level ``message``)."""
    if not isinstance(body, Mapping):
        return None
    for obj in (body.get("error"), body):
        if isinstance(obj, Mapping) and isinstance(obj.get("message"), str):
            return str(obj["message"])
    return None


def kind_for_codes(codes: tuple[str, ...]) -> tuple[ModelErrorKind, str] | None:
    """The first candidate code we recognise and its kind, or None."""
    for code in codes:
        kind = PROVIDER_CODE_KINDS.get(code)
        if kind is not None:
            return kind, code
    return None


def kind_for_status(status: int, message: str = "") -> ModelErrorKind:
    """The HTTP-status fallback for codes we do not recognise."""
    lowered = message.lower()
    if status == 401:
        return _K.AUTHENTICATION
    if status == 402:
        return _K.QUOTA_EXHAUSTED
    if status == 403:
        return _K.PERMISSION_DENIED
    if status == 404:
        return _K.MODEL_NOT_FOUND
    if status == 408:
        return _K.TIMEOUT
    if status == 429:
        if any(word in lowered for word in ("quota", "billing", "insufficient", "balance")):
            return _K.QUOTA_EXHAUSTED
        if any(word in lowered for word in ("overload", "capacity", "busy")):
            return _K.OVERLOADED
        return _K.RATE_LIMITED
    if status == 529:
        return _K.OVERLOADED
    if 500 <= status <= 599:
        return _K.OVERLOADED if "overload" in lowered else _K.SERVER_ERROR
    if status in (400, 409, 413, 422):
        return _K.INVALID_REQUEST
    return _K.UNKNOWN


def retry_after_ms(headers: Mapping[str, str], now: datetime | None = None) -> int | None:
    """``retry-after-ms`` (milliseconds) wins over ``Retry-After`` (seconds or an HTTP date).
    ``headers`` must look names up case-insensitively (httpx.Headers does)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            value = float(raw_ms)
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return math.ceil(value)
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
        return max(0, math.ceil(seconds * 1000))
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return math.ceil(seconds * 1000)


def retry_hint(kind: ModelErrorKind, after_ms: int | None) -> RetryHint:
    if kind is _K.CONTEXT_OVERFLOW:
        return RetryHint.CALLER_DECISION
    if kind not in _RETRYABLE_KINDS:
        return RetryHint.NEVER
    return RetryHint.AFTER_MILLIS if after_ms is not None else RetryHint.BACKOFF


def request_id(headers: Mapping[str, str], body: object = None) -> str | None:
    for name in ("x-request-id", "request-id"):
        value = headers.get(name)
        if value:
            return value[:256]
    if isinstance(body, Mapping):
        value = body.get("request_id")
        if isinstance(value, str) and value:
            return value[:256]
    return None


def http_error(
    status: int,
    body: object,
    headers: Mapping[str, str],
    *,
    fallback_message: str = "",
    now: datetime | None = None,
) -> ModelError:
    """An HTTP error answer before any stream: phase response_headers, delivery
    accepted_no_semantic_output (model-providers.md §3)."""
    message = provider_error_message(body) or fallback_message or f"HTTP {status}"
    codes = provider_error_codes(body)
    matched = kind_for_codes(codes)
    code = codes[0] if codes else None
    if matched is not None:
        kind, code = matched
    else:
        kind = kind_for_status(status, message)
    after = retry_after_ms(headers, now) if kind in _RETRYABLE_KINDS else None
    return ModelError(
        kind,
        f"provider error (HTTP {status}): {message}",
        phase=ErrorPhase.RESPONSE_HEADERS,
        delivery=DeliveryState.ACCEPTED_NO_SEMANTIC_OUTPUT,
        retry=retry_hint(kind, after),
        http_status=status,
        provider_code=code,
        provider_request_id=request_id(headers, body),
        retry_after_ms=after,
    )


def stream_error(body: object, *, fallback_message: str = "") -> ModelError:
    """An ``error`` event inside an accepted stream: classified by code only (no status)."""
    message = provider_error_message(body) or fallback_message or "error event in the stream"
    codes = provider_error_codes(body)
    matched = kind_for_codes(codes)
    kind: ModelErrorKind = _K.UNKNOWN
    code = codes[0] if codes else None
    if matched is not None:
        kind, code = matched
    return ModelError(
        kind,
        f"provider stream error: {message}",
        phase=ErrorPhase.STREAM_DECODE,
        delivery=DeliveryState.ACCEPTED_NO_SEMANTIC_OUTPUT,
        retry=retry_hint(kind, None),
        provider_code=code,
        provider_request_id=request_id({}, body),
    )
