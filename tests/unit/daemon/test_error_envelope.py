"""One envelope everywhere (daemon-api.md §2; issue 12 point 4; docs/reliability.md "One envelope
everywhere"): product errors, framework 404/405/422 and unhandled exceptions all answer
``{"error": {"code", "message", …}}``; a 500 carries a request id and no internals, and the log
line carries the traceback."""

from __future__ import annotations

import asyncio
from typing import cast

import httpx
import structlog

from openwork_core.daemon.app import create_app
from openwork_core.service import OpenWorkCore
from openwork_core.session.errors import Busy
from openwork_core.storage.errors import StorageError

TOKEN = "unit-token"


class _Core:
    """Only the facade methods these requests reach; each fails the way a test needs."""

    async def list_sessions(self) -> list[object]:
        raise RuntimeError("connection to server at 10.0.0.7 failed: secret-internal-text")

    async def list_providers(self) -> list[object]:
        raise StorageError('duplicate key value violates unique constraint "providers_pkey"')

    async def get_session(self, session_id: str) -> object:
        raise Busy("turn_1")


def _client() -> httpx.AsyncClient:
    app = create_app(
        cast(OpenWorkCore, _Core()),
        token=TOKEN,
        allowed_origins=frozenset(),
        allow_remote=False,
        version="0.0.0",
        shutdown=asyncio.Event(),
        max_body_bytes=1024,
    )
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://127.0.0.1",
        headers={"Authorization": f"Bearer {TOKEN}"},
    )


async def test_an_unhandled_exception_is_a_500_internal_error_with_a_request_id_and_no_internals() -> (
    None
):
    with structlog.testing.capture_logs() as logs:
        async with _client() as client:
            response = await client.get("/v1/sessions")
    assert response.status_code == 500
    error = response.json()["error"]
    assert error["code"] == "internal_error"
    assert error["request_id"] == response.headers["x-request-id"]
    assert "secret-internal-text" not in response.text
    (line,) = [e for e in logs if e["event"] == "request.unhandled"]
    assert line["request_id"] == error["request_id"]
    assert line["exc_info"] is True  # the renderer writes the traceback into the log line


async def test_a_storage_error_answers_its_code_without_the_database_text() -> None:
    async with _client() as client:
        response = await client.get("/v1/providers")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "persistence_error"
    assert "providers_pkey" not in response.text


async def test_a_product_error_answers_its_own_status_code_and_extra_fields() -> None:
    async with _client() as client:
        response = await client.get("/v1/sessions/ses_1/events")
    assert response.status_code == 409
    assert response.json() == {
        "error": {
            "code": "busy",
            "message": "session already has an active turn: turn_1",
            "turn_id": "turn_1",
        }
    }


async def test_framework_404_405_and_422_answer_in_the_envelope() -> None:
    async with _client() as client:
        unknown = await client.get("/v1/no-such-route")
        method = await client.delete("/v1/providers")
        invalid = await client.post("/v1/sessions", json={"workspace": 3})
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "not_found")
    assert (method.status_code, method.json()["error"]["code"]) == (405, "method_not_allowed")
    assert (invalid.status_code, invalid.json()["error"]["code"]) == (422, "invalid_request")
    assert invalid.json()["error"]["errors"][0]["loc"] == ["body", "workspace"]
    for response in (unknown, method, invalid):
        assert "detail" not in response.json()


async def test_a_body_over_the_bound_is_413_payload_too_large_before_the_route_runs() -> None:
    async with _client() as client:
        declared = await client.post("/v1/sessions", content=b"x" * 2048)

        async def chunks():  # type: ignore[no-untyped-def]
            for _ in range(4):
                yield b"y" * 512

        chunked = await client.post(
            "/v1/sessions", content=chunks(), headers={"content-type": "application/json"}
        )
    for response in (declared, chunked):
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "payload_too_large"
