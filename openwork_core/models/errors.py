"""Provider error classification (model-providers.md §3): pure functions, no SDK types.

A provider error becomes a ``ModelError`` by its provider error code first (the tables below, merged
across vendors), then by HTTP status. Context overflow is recognised by code (the
``CONTEXT_OVERFLOW`` group) or, for the vendors that send no code of their own (Anthropic, vLLM,
LM Studio, Ollama; issue 14 point 1), by one of the closed list of anchored vendor sentences in
``OVERFLOW_SHAPES`` on a 400/413/422/500 answer or a stream error; loose text such as "maximum
context length exceeded" is not an overflow. ``Retry-After`` (seconds or HTTP date) and
``retry-after-ms`` become ``retry_after_ms``. ``turn_failure_code`` maps a kind to the turn failure code a user can act on.
"""

from __future__ import annotations

import email.utils
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime

from openwork_core.failure_codes import FailureCode
from openwork_core.models.port import (
    DeliveryState,
    ErrorPhase,
    ModelError,
    ModelErrorKind,
    RetryHint,
)

_K = ModelErrorKind

_CODE_GROUPS: tuple[tuple[ModelErrorKind, tuple[str, ...]], ...] = (
    (
        _K.CONTEXT_OVERFLOW,
        # ``exceed_context_size_error``: llama.cpp's server (``n_prompt_tokens`` > ``n_ctx``).
        (
            "context_length_exceeded",
            "exceeded_model_token_limit",
            "1215",
            "exceed_context_size_error",
        ),
    ),
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
    (
        _K.MODEL_NOT_FOUND,
        # ``not_found_error``: Anthropic's 404 type; ``NotFoundError``: vLLM's.
        ("model_not_found", "resource_not_found_error", "1211", "not_found_error", "NotFoundError"),
    ),
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

OVERFLOW_SHAPES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        # Anthropic: 400 invalid_request_error "prompt is too long: 208310 tokens > 200000 maximum"
        r"\bprompt is too long: \d+ tokens > \d+ maximum\b",
        # OpenAI-compatible servers (vLLM, older OpenAI): "This model's maximum context length is
        # 4096 tokens. However, you requested 4610 tokens …"
        r"\bmaximum context length is \d+ tokens\b",
        # vLLM V1: "The decoder prompt (length 5000) is longer than the maximum model length of
        # 4096"
        r"\bis longer than the maximum model length of \d+\b",
        # llama.cpp (also when only the message survives a proxy)
        r"\bexceeds the available context size \(\d+ tokens\)",
        # LM Studio: "Trying to keep the first 6717 tokens when context the overflows. However, the
        # model is loaded with context length of only 4096 tokens …" and the llama.cpp-engine text
        r"\btrying to keep the first \d+ tokens when context the overflows\b",
        r"\bnumber of tokens to keep from the initial prompt is greater than the context length\b",
        # Ollama with truncation disabled: "the input length exceeds the context length"
        r"\binput length exceeds (?:the|the maximum|maximum) context length\b",
    )
)
"""Vendor overflow messages sent without an overflow code (issue 14 point 1; fixtures in
tests/fixtures/provider_errors)."""

MODEL_NOT_FOUND_SHAPES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        # Ollama: 404 'model "llama9" not found, try pulling it first' (type api_error)
        r"\bmodel ['\"`]?[^'\"`]{1,200}['\"`]? not found\b",
        r"\bmodel not found\b",
        # OpenAI / vLLM: "The model `gpt-9` does not exist"
        r"\bthe model ['\"`][^'\"`]{1,200}['\"`] does not exist\b",
    )
)
"""A 404 (or 400) naming an unknown model whose code says something else (``api_error``)."""

_OVERFLOW_STATUSES = frozenset({400, 413, 422, 500})
"""The statuses an overflow sentence is believed on (Ollama answers some with 500)."""

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
    """The human message of an error body (``error.message`` or top-level ``message``; a body
    or ``error`` that is a plain string, as LM Studio sends, is the message itself)."""
    if isinstance(body, str) and body:
        return body
    if not isinstance(body, Mapping):
        return None
    error = body.get("error")
    if isinstance(error, str) and error:  # LM Studio: {"error": "Trying to keep …"}
        return error
    for obj in (error, body):
        if isinstance(obj, Mapping) and isinstance(obj.get("message"), str):
            return str(obj["message"])
    return None


def is_overflow_message(message: str) -> bool:
    """One of the vendor overflow shapes (``OVERFLOW_SHAPES``)."""
    return any(shape.search(message) for shape in OVERFLOW_SHAPES)


def is_model_not_found_message(message: str) -> bool:
    return any(shape.search(message) for shape in MODEL_NOT_FOUND_SHAPES)


def classify(
    status: int | None, codes: tuple[str, ...], message: str
) -> tuple[ModelErrorKind, str | None]:
    """The kind of an error answer and the code that decided it: an overflow code or shape first
    (on a 400/413/422/500 answer or a stream error), then the code tables, then a
    model-not-found shape on a 400/404, then the HTTP status; an in-stream error with no known
    code is ``unknown``."""
    code = codes[0] if codes else None
    matched = kind_for_codes(codes)
    if matched is not None and matched[0] is _K.CONTEXT_OVERFLOW:
        return matched
    overflow_status = status is None or status in _OVERFLOW_STATUSES
    if overflow_status and is_overflow_message(message):
        return _K.CONTEXT_OVERFLOW, code
    if status in (400, 404) and is_model_not_found_message(message):
        return _K.MODEL_NOT_FOUND, code
    if matched is not None:
        return matched
    if status is None:
        return _K.UNKNOWN, code
    return kind_for_status(status, message), code


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
    url: str | None = None,
) -> ModelError:
    """An HTTP error answer before any stream: phase response_headers, delivery
    accepted_no_semantic_output (model-providers.md §3). A 404 names ``url``, the address called
    (a wrong base URL is the usual cause; issue 14 point 2)."""
    message = provider_error_message(body) or fallback_message or f"HTTP {status}"
    kind, code = classify(status, provider_error_codes(body), message)
    after = retry_after_ms(headers, now) if kind in _RETRYABLE_KINDS else None
    called = f" (POST {url})" if status == 404 and url else ""
    return ModelError(
        kind,
        f"provider error (HTTP {status}){called}: {message}",
        phase=ErrorPhase.RESPONSE_HEADERS,
        delivery=DeliveryState.ACCEPTED_NO_SEMANTIC_OUTPUT,
        retry=retry_hint(kind, after),
        http_status=status,
        provider_code=code,
        provider_request_id=request_id(headers, body),
        retry_after_ms=after,
    )


def stream_error(body: object, *, fallback_message: str = "") -> ModelError:
    """An ``error`` event inside an accepted stream: classified like an HTTP error without a
    status (codes, then the overflow and model-not-found shapes)."""
    message = provider_error_message(body) or fallback_message or "error event in the stream"
    kind, code = classify(None, provider_error_codes(body), message)
    return ModelError(
        kind,
        f"provider stream error: {message}",
        phase=ErrorPhase.STREAM_DECODE,
        delivery=DeliveryState.ACCEPTED_NO_SEMANTIC_OUTPUT,
        retry=retry_hint(kind, None),
        provider_code=code,
        provider_request_id=request_id({}, body),
    )


def connection_cause(exc: BaseException) -> str:
    """An SDK's "Connection error." plus what lies under it (refused, DNS, TLS), bounded."""
    cause = exc.__cause__ or exc.__context__
    detail = f"{type(cause).__name__}: {cause}" if cause is not None else ""
    return f"{exc} {detail[:300]}".strip()


def unreachable(url: str, detail: str) -> ModelError:
    """The provider could not be reached (connection refused, DNS, TLS): a network error whose
    message names the URL called (issue 14 point 6)."""
    return ModelError(
        _K.NETWORK,
        f"provider unreachable at {url}: {detail}",
        phase=ErrorPhase.CONNECT,
        delivery=DeliveryState.POSSIBLY_SENT,
        retry=RetryHint.BACKOFF,
    )


def turn_failure_code(error: ModelError) -> FailureCode:
    """The turn failure code of a model error a user can act on (issue 14 point 6):
    ``provider_auth_failed`` (401/403), ``provider_unreachable`` (no connection: nothing was
    answered), ``provider_rate_limited`` (429 after the retries), ``model_not_found``; every other
    kind stays ``model_error``."""
    kind = error.kind
    if kind in (_K.AUTHENTICATION, _K.PERMISSION_DENIED):
        return FailureCode.PROVIDER_AUTH_FAILED
    if kind is _K.RATE_LIMITED:
        return FailureCode.PROVIDER_RATE_LIMITED
    if kind is _K.MODEL_NOT_FOUND:
        return FailureCode.MODEL_NOT_FOUND
    connect = error.phase is ErrorPhase.CONNECT
    if kind is _K.NETWORK and connect and error.delivery is DeliveryState.POSSIBLY_SENT:
        return FailureCode.PROVIDER_UNREACHABLE
    return FailureCode.MODEL_ERROR
