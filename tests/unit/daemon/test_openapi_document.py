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
from openwork_core.daemon.desktop_schemas import SessionUpdateEnvelopeBody
from openwork_core.daemon.errors import ErrorEnvelope
from openwork_core.daemon.openapi import document_bytes
from openwork_core.daemon.openapi.__main__ import served_document
from openwork_core.ids import SessionId, TurnId
from openwork_core.plan.model import PlanStep, PlanStepStatus
from openwork_core.session.updates import SessionUpdate, SessionUpdateEnvelope
from openwork_core.session.wire import wire_json

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
    envelope = {"$ref": "#/components/schemas/SessionUpdateEnvelopeBody"}
    session = document["paths"]["/v1/sessions/{sid}/events"]["get"]["responses"]["200"]
    assert session["content"]["text/event-stream"]["schema"] == envelope
    everything = document["paths"]["/v1/events"]["get"]["responses"]["200"]
    assert everything["content"]["text/event-stream"]["schema"] == {
        "oneOf": [envelope, {"$ref": "#/components/schemas/BroadcastResync"}]
    }


_CARD = {
    "session_id": "s",
    "turn_id": "t",
    "tool_call_id": "tc",
    "provider_call_id": "p",
    "tool_name": "bash",
    "card": {"mode": "auto", "command": "rm -rf build", "paths": []},
}
_EXAMPLES: dict[str, dict[str, object]] = {
    "TurnStarted": {"client_request_id": "r"},
    "PhaseChanged": {"phase": "running_model"},
    "TextDeltaUpdate": {"delta": "x"},
    "ReasoningDeltaUpdate": {"delta": "x"},
    "ToolCallStarted": {
        "tool_call": {
            "tool_call_id": "t",
            "provider_call_id": "p",
            "name": "read",
            "input": {"path": "a"},
            "status": "validating",
        }
    },
    "ToolCallProgress": {"tool_call_id": "t", "progress": {"kind": "stdout", "chunk": "x"}},
    "ToolCallFinished": {
        "tool_call_id": "t",
        "provider_call_id": "p",
        "tool_name": "read",
        "status": "succeeded",
        "output": "x",
        "is_error": False,
    },
    "PermissionRequested": {"request": _CARD},
    "PermissionResolved": {"tool_call_id": "t", "decision": "deny"},
    "PlanUpdated": {
        "explanation": None,
        "steps": [PlanStep(step="a", status=PlanStepStatus.IN_PROGRESS)],
        "plan": [PlanStep(step="a", status=PlanStepStatus.IN_PROGRESS)],
        "updated_at": "2026-01-01T00:00:00Z",
    },
    "ContextUpdated": {
        "system_context_tokens": 1,
        "conversation_tokens": 2,
        "tool_surface_tokens": 3,
        "estimated_input_tokens": 6,
        "reserved_output_tokens": 4,
        "auto_compact_percent": 1.5,
    },
    "WarningRaised": {"code": "window_too_small", "message": "m", "model_call": 1},
    "TurnSteered": {"steer_id": "steer_1", "client_request_id": "r", "text": "also this"},
    "TurnFinished": {"outcome": {"status": "completed", "final_text": "done"}},
    "StreamEnded": {"reason": "deleted"},
}


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _conforms(document: dict[str, Any], schema: dict[str, Any], value: object, at: str) -> None:
    """The wire value has every required key of its schema and no key the schema lacks."""
    schema = _resolve(document, schema)
    if isinstance(value, dict) and "properties" in schema:
        assert set(schema.get("required", [])) <= set(value), at
        assert set(value) <= set(schema["properties"]), (at, set(value), schema["properties"])
        for key, item in value.items():
            _conforms(document, schema["properties"][key], item, f"{at}.{key}")
    elif isinstance(value, dict) and ("anyOf" in schema or "oneOf" in schema):
        options = schema.get("oneOf") or schema["anyOf"]
        mapping = schema.get("discriminator", {}).get("mapping")
        if mapping and "type" in value:
            _conforms(document, {"$ref": mapping[value["type"]]}, value, at)
        else:
            objects = [o for o in options if _resolve(document, o).get("properties")]
            fits = [o for o in objects if set(value) <= set(_resolve(document, o)["properties"])]
            if objects:
                assert fits, at
                _conforms(document, fits[0], value, at)


@pytest.mark.parametrize("kind", get_args(SessionUpdate), ids=lambda k: k.__name__)
def test_each_update_kind_as_the_daemon_writes_it_matches_its_schema(
    document: dict[str, Any], kind: type
) -> None:
    """The schema describes the real wire bytes (``session/wire.py``'s camelCase, optional card
    fields left out), kind by kind: the envelope validates and every key is a schema key."""
    update = TypeAdapter(kind).validate_python(_EXAMPLES.get(kind.__name__, {}))
    wire = wire_json(
        SessionUpdateEnvelope(
            session_id=SessionId("s"),
            turn_id=TurnId("t"),
            sequence=1,
            occurred_at_ms=2,
            update=update,
        )
    )
    parsed = SessionUpdateEnvelopeBody.model_validate_json(wire)
    assert type(parsed.update) is kind
    _conforms(
        document,
        {"$ref": "#/components/schemas/SessionUpdateEnvelopeBody"},
        orjson.loads(wire),
        "envelope",
    )


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
