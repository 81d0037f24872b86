"""Provider error classification tables (model-providers.md §3)."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from openwork_core.models.errors import (
    PROVIDER_CODE_KINDS,
    http_error,
    kind_for_status,
    provider_error_codes,
    retry_after_ms,
    stream_error,
)
from openwork_core.models.port import DeliveryState, ErrorPhase, ModelErrorKind, RetryHint

K = ModelErrorKind
NO_HEADERS = httpx.Headers()


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("context_length_exceeded", K.CONTEXT_OVERFLOW),
        ("exceeded_model_token_limit", K.CONTEXT_OVERFLOW),
        ("1215", K.CONTEXT_OVERFLOW),
        ("insufficient_quota", K.QUOTA_EXHAUSTED),
        ("billing_hard_limit_reached", K.QUOTA_EXHAUSTED),
        ("usage_not_included", K.QUOTA_EXHAUSTED),
        ("exceeded_current_quota_error", K.QUOTA_EXHAUSTED),
        ("1113", K.QUOTA_EXHAUSTED),
        ("1308", K.QUOTA_EXHAUSTED),
        ("1311", K.QUOTA_EXHAUSTED),
        ("1314", K.QUOTA_EXHAUSTED),
        ("1321", K.QUOTA_EXHAUSTED),
        ("rate_limit_exceeded", K.RATE_LIMITED),
        ("rate_limit_error", K.RATE_LIMITED),
        ("rate_limit_reached_error", K.RATE_LIMITED),
        ("1302", K.RATE_LIMITED),
        ("server_is_overloaded", K.OVERLOADED),
        ("slow_down", K.OVERLOADED),
        ("engine_overloaded_error", K.OVERLOADED),
        ("1305", K.OVERLOADED),
        ("invalid_api_key", K.AUTHENTICATION),
        ("1000", K.AUTHENTICATION),
        ("1005", K.AUTHENTICATION),
        ("permission_denied_error", K.PERMISSION_DENIED),
        ("1220", K.PERMISSION_DENIED),
        ("invalid_prompt", K.INVALID_REQUEST),
        ("1261", K.INVALID_REQUEST),
        ("model_not_found", K.MODEL_NOT_FOUND),
        ("resource_not_found_error", K.MODEL_NOT_FOUND),
        ("1211", K.MODEL_NOT_FOUND),
        ("1212", K.CAPABILITY_UNSUPPORTED),
        ("content_filter", K.CONTENT_FILTERED),
        ("1301", K.CONTENT_FILTERED),
        ("server_error", K.SERVER_ERROR),
        ("unexpected_output", K.SERVER_ERROR),
        ("server_unavailable", K.SERVER_ERROR),
        ("1234", K.SERVER_ERROR),
        ("client_closed_request", K.CANCELLED),
    ],
)
def test_each_shared_provider_code_has_its_kind(code: str, kind: ModelErrorKind) -> None:
    assert PROVIDER_CODE_KINDS[code] is kind


def test_codes_1312_and_1313_are_not_quota_codes() -> None:
    assert "1312" not in PROVIDER_CODE_KINDS
    assert "1313" not in PROVIDER_CODE_KINDS


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (401, "", K.AUTHENTICATION),
        (402, "", K.QUOTA_EXHAUSTED),
        (403, "", K.PERMISSION_DENIED),
        (404, "", K.MODEL_NOT_FOUND),
        (408, "", K.TIMEOUT),
        (429, "You exceeded your current quota", K.QUOTA_EXHAUSTED),
        (429, "The engine is overloaded", K.OVERLOADED),
        (429, "Too many requests", K.RATE_LIMITED),
        (529, "", K.OVERLOADED),
        (500, "", K.SERVER_ERROR),
        (503, "", K.SERVER_ERROR),
        (400, "", K.INVALID_REQUEST),
        (409, "", K.INVALID_REQUEST),
        (413, "", K.INVALID_REQUEST),
        (422, "", K.INVALID_REQUEST),
        (418, "", K.UNKNOWN),
    ],
)
def test_unknown_codes_fall_back_to_the_http_status(
    status: int, message: str, kind: ModelErrorKind
) -> None:
    assert kind_for_status(status, message) is kind


def test_codes_are_read_from_error_response_error_and_top_level_in_that_order() -> None:
    body = {
        "error": {"code": 1215, "type": "invalid_request_error"},
        "response": {"error": {"code": "x"}},
        "code": "top",
    }
    assert provider_error_codes(body) == ("1215", "invalid_request_error", "x", "top")


def test_overflow_is_recognised_by_code_only_never_by_message_text() -> None:
    by_text = http_error(400, {"error": {"message": "maximum context length exceeded"}}, NO_HEADERS)
    assert by_text.kind is K.INVALID_REQUEST
    by_code = http_error(400, {"error": {"code": "context_length_exceeded"}}, NO_HEADERS)
    assert by_code.kind is K.CONTEXT_OVERFLOW
    assert by_code.retry is RetryHint.CALLER_DECISION
    assert by_code.phase is ErrorPhase.RESPONSE_HEADERS
    assert by_code.delivery is DeliveryState.ACCEPTED_NO_SEMANTIC_OUTPUT


def test_an_anthropic_error_type_is_a_code() -> None:
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}}
    error = http_error(429, body, httpx.Headers({"request-id": "req_1"}))
    assert error.kind is K.RATE_LIMITED
    assert error.retry is RetryHint.BACKOFF
    assert error.provider_request_id == "req_1"


def test_retry_after_ms_wins_over_retry_after() -> None:
    headers = httpx.Headers({"retry-after-ms": "1500.2", "Retry-After": "9"})
    assert retry_after_ms(headers) == 1501


def test_retry_after_accepts_seconds_and_an_http_date() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_ms(httpx.Headers({"Retry-After": "3"}), now) == 3000
    date = httpx.Headers({"Retry-After": "Thu, 01 Jan 2026 12:00:05 GMT"})
    assert retry_after_ms(date, now) == 5000
    assert retry_after_ms(httpx.Headers({"Retry-After": "soon"}), now) is None


def test_retry_after_turns_a_rate_limit_into_after_millis() -> None:
    error = http_error(
        429, {"error": {"code": "rate_limit_exceeded"}}, httpx.Headers({"Retry-After": "2"})
    )
    assert error.retry is RetryHint.AFTER_MILLIS
    assert error.retry_after_ms == 2000


def test_a_quota_error_is_never_retried_even_with_retry_after() -> None:
    error = http_error(
        429, {"error": {"code": "insufficient_quota"}}, httpx.Headers({"Retry-After": "2"})
    )
    assert error.kind is K.QUOTA_EXHAUSTED
    assert error.retry is RetryHint.NEVER
    assert error.retry_after_ms is None


def test_diagnostics_are_truncated() -> None:
    error = http_error(400, {"error": {"code": "c" * 1000, "message": "m" * 10_000}}, NO_HEADERS)
    assert error.provider_code is not None
    assert len(error.provider_code) == 256
    assert len(error.message) == 4096


def test_a_mid_stream_error_is_classified_by_code_in_phase_stream_decode() -> None:
    error = stream_error({"type": "overloaded_error", "message": "busy"})
    assert error.kind is K.OVERLOADED
    assert error.phase is ErrorPhase.STREAM_DECODE
    assert error.retry is RetryHint.BACKOFF
    assert stream_error({"code": "mystery"}).kind is K.UNKNOWN
