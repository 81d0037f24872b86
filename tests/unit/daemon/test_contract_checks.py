"""The suite's contract check (issue 25 point 3) can fail: an extra field, a missing required
field, a wrong enum value, an undeclared status and a bad SSE payload are each refused, and a
correct answer passes."""

from __future__ import annotations

import orjson
import pytest

from tests.support.contract import (
    ContractViolation,
    check_body,
    check_event,
    utc_timestamp,
    validate,
)

_HEALTH = {"status": "ok", "version": "1", "database": "ok"}


def _health(body: object, status: int = 200) -> None:
    check_body("GET", "/v1/health", status, "application/json", orjson.dumps(body))


def test_a_correct_answer_passes_and_every_kind_of_mistake_is_a_violation() -> None:
    _health(_HEALTH)
    for wrong in (
        {**_HEALTH, "uptime": 3},  # a field the schema does not name
        {"status": "ok", "version": "1"},  # a required field missing
        {**_HEALTH, "status": "fine"},  # not one of the enum's values
    ):
        with pytest.raises(ContractViolation):
            _health(wrong)
    with pytest.raises(ContractViolation, match="does not declare 401"):
        _health({"error": {"code": "unauthorized", "message": "x"}}, status=401)


def test_an_error_detail_has_only_the_fields_of_its_codes() -> None:
    busy = {"error": {"code": "busy", "message": "m", "turn_id": "t"}}
    check_body("POST", "/v1/sessions/s/turns", 409, "application/json", orjson.dumps(busy))
    odd = {"error": {"code": "busy", "message": "m", "stack": "…"}}
    with pytest.raises(ContractViolation):
        check_body("POST", "/v1/sessions/s/turns", 409, "application/json", orjson.dumps(odd))


def test_a_method_a_path_does_not_list_must_answer_405_in_the_envelope() -> None:
    refused = orjson.dumps({"error": {"code": "method_not_allowed", "message": "m"}})
    check_body("DELETE", "/v1/health", 405, "application/json", refused)
    with pytest.raises(ContractViolation):
        check_body("DELETE", "/v1/health", 200, "application/json", b"{}")


def test_an_event_payload_is_checked_against_the_streams_schema() -> None:
    envelope = {
        "version": 7,
        "sessionId": "s",
        "turnId": None,
        "sequence": 1,
        "occurredAtMs": 0,
        "update": {"type": "stream_ended", "reason": "deleted"},
    }
    check_event("/v1/sessions/s/events", envelope)
    check_event("/v1/events", {"version": 7, "sequence": 9, "update": {"type": "resync"}})
    with pytest.raises(ContractViolation):
        check_event("/v1/sessions/s/events", {**envelope, "update": {"type": "stream_ended"}})


def test_a_timestamp_not_in_rfc3339_utc_with_z_is_a_violation() -> None:
    """Issue 25 point 3, one timestamp format: every ``date-time`` field of the document is
    checked as RFC 3339 in UTC written with ``Z``; an offset, a space, a date that does not exist
    or a bare date are refused."""
    good = "2026-12-02T03:04:05.123456Z"
    assert utc_timestamp(good) and utc_timestamp("2026-12-02T03:04:05Z")
    for bad in (
        "2026-12-02T03:04:05+00:00",
        "2026-12-02 03:04:05Z",
        "2026-13-02T03:04:05Z",
        "2026-12-02",
    ):
        assert not utc_timestamp(bad), bad
    schema = {"type": "string", "format": "date-time"}
    validate(schema, good, "a timestamp")
    with pytest.raises(ContractViolation):
        validate(schema, "2026-12-02T03:04:05+01:00", "a timestamp")
