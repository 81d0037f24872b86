"""Issue 16 point 3: an OpenAPI document a client can be generated from (daemon-api.md §2)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any, get_args

import httpx
import orjson
import pytest
from pydantic import TypeAdapter

from openwork_core.daemon.app import create_app
from openwork_core.daemon.desktop_schemas import ErrorEnvelope, SessionUpdateEnvelopeBody
from openwork_core.daemon.openapi import document_bytes
from openwork_core.daemon.openapi.__main__ import served_document
from openwork_core.session.updates import SessionUpdate, SessionUpdateEnvelope

COMMITTED = Path(__file__).resolve().parents[3] / "docs" / "openapi.json"


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return served_document()


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    ]


def test_the_committed_document_is_the_served_one(document: dict[str, Any]) -> None:
    """docs/openapi.json must be regenerated when the API changes:
    ``python -m openwork_core.daemon.openapi > docs/openapi.json``."""
    assert COMMITTED.read_bytes() == document_bytes(document), (
        "docs/openapi.json differs from the served document; regenerate it with "
        "`python -m openwork_core.daemon.openapi > docs/openapi.json`"
    )


def test_every_operation_has_a_unique_camel_case_id_for_people(document: dict[str, Any]) -> None:
    ids = [op["operationId"] for _, _, op in _operations(document)]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z]+(?:[A-Z][a-z]+)*", i) for i in ids), ids
    assert {"createSession", "startTurn", "listSessions", "deleteSession", "getTurn"} <= set(ids)


def test_every_operation_but_health_needs_the_bearer_scheme_and_lists_its_errors_in_our_envelope(
    document: dict[str, Any],
) -> None:
    """daemon-api.md §2: 401 without the token, 403 for a foreign Host, 404 for an unknown id,
    422 for bad input; every error schema is ``{"error": {"code", "message"}}``."""
    assert document["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "the token of daemon.json (OPENWORK_TOKEN)",
    }
    schemas = document["components"]["schemas"]
    assert "HTTPValidationError" not in schemas
    for method, path, op in _operations(document):
        public = op["operationId"] == "getHealth"
        assert op["security"] == ([] if public else [{"bearerAuth": []}]), path
        responses = op["responses"]
        expected = {"403"} | (set() if public else {"401"}) | ({"404"} if "{" in path else set())
        assert expected <= set(responses), (method, path)
        for status, response in responses.items():
            content = response.get("content", {})
            if public and status == "503":
                assert content["application/json"]["schema"] == {
                    "$ref": "#/components/schemas/HealthBody"
                }
            elif int(status) >= 400:
                assert content["application/json"]["schema"] == {
                    "$ref": "#/components/schemas/ErrorEnvelope"
                }, (method, path, status)
            elif status != "204":
                assert content, (method, path, status)
                (media,) = content.values()
                assert media["schema"], (method, path, status)


def test_the_sse_payloads_are_a_discriminated_union_of_every_update_kind(
    document: dict[str, Any],
) -> None:
    """daemon-api.md §4: the envelope and each ``update`` kind are named schemas."""
    schemas = document["components"]["schemas"]
    update = schemas["SessionUpdateEnvelopeBody"]["properties"]["update"]
    kinds = {t.__name__ for t in get_args(SessionUpdate)}
    assert set(update["discriminator"]["mapping"].values()) == {
        f"#/components/schemas/{k}" for k in kinds
    }
    assert kinds <= set(schemas)
    for path in ("/v1/events", "/v1/sessions/{sid}/events"):
        stream = document["paths"][path]["get"]["responses"]["200"]["content"]
        assert stream["text/event-stream"]["schema"] == {
            "$ref": "#/components/schemas/SessionUpdateEnvelopeBody"
        }


@pytest.mark.parametrize("kind", get_args(SessionUpdate), ids=lambda k: k.__name__)
def test_each_update_kind_as_the_daemon_writes_it_validates_against_its_schema(
    kind: type,
) -> None:
    """The schema describes the real wire bytes (orjson of the envelope), kind by kind."""
    examples: dict[str, dict[str, object]] = {
        "TurnStarted": {"clientRequestId": "r"},
        "PhaseChanged": {"phase": "running_model"},
        "TextDeltaUpdate": {"delta": "x"},
        "ReasoningDeltaUpdate": {"delta": "x"},
        "ToolCallStarted": {
            "toolCall": {
                "toolCallId": "t",
                "providerCallId": "p",
                "name": "read",
                "input": {"path": "a"},
                "status": "running",
            }
        },
        "ToolCallProgress": {"toolCallId": "t", "progress": {"kind": "stdout", "chunk": "x"}},
        "ToolCallFinished": {
            "toolCallId": "t",
            "providerCallId": "p",
            "toolName": "read",
            "status": "succeeded",
            "output": "x",
            "isError": False,
        },
        "PermissionRequested": {"request": {"toolCallId": "t"}},
        "PermissionResolved": {"toolCallId": "t", "decision": "deny"},
        "PlanUpdated": {"explanation": None, "plan": [], "updatedAt": "2026-01-01T00:00:00Z"},
        "ContextUpdated": {
            "systemContextTokens": 1,
            "conversationTokens": 2,
            "toolSurfaceTokens": 3,
            "estimatedInputTokens": 6,
            "reservedOutputTokens": 4,
            "autoCompactPercent": 1.5,
        },
        "TurnFinished": {"outcome": {"status": "completed"}},
    }
    update = TypeAdapter(kind).validate_python(examples.get(kind.__name__, {}))
    wire = orjson.dumps(
        SessionUpdateEnvelope(sessionId="s", turnId="t", sequence=1, occurredAtMs=2, update=update)
    )
    parsed = SessionUpdateEnvelopeBody.model_validate_json(wire)
    assert type(parsed.update) is kind
    assert orjson.loads(parsed.model_dump_json()) == orjson.loads(wire)


async def test_the_document_is_served_without_a_token_and_other_routes_still_need_one() -> None:
    """Issue 16 §3: ``GET /v1/openapi.json`` is public; an API route answers 401 in the
    documented envelope."""
    app = create_app(
        None,  # type: ignore[arg-type]  # neither request reaches the core
        token="t",
        allowed_origins=frozenset(),
        allow_remote=False,
        version="test",
        shutdown=asyncio.Event(),
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        served = await client.get("/v1/openapi.json")
        assert served.status_code == 200
        assert served.json()["paths"]["/v1/sessions"]["get"]["operationId"] == "listSessions"
        refused = await client.get("/v1/sessions")
        assert refused.status_code == 401
        ErrorEnvelope.model_validate(refused.json())
        foreign = await client.get("/v1/openapi.json", headers={"Host": "example.com"})
        assert foreign.status_code == 403
