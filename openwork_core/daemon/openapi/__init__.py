"""The OpenAPI document a client can be generated from (issue 16 point 3, issue 25 point 3).

FastAPI's document, then: operation ids named for people (``createSession``, ``startTurn``);
a bearer security scheme on every operation but the public ones; per operation the error
statuses it really answers (derived from the route: its security, its parameters and body; plus
the domain refusals of ``DOMAIN_ERRORS``), each with the real envelope; a response schema for
routes that answer raw JSON; the SSE payloads as named schemas (the update kinds as a
discriminated union); every field of a response required unless the wire leaves it out. Served
without auth at ``GET /v1/openapi.json`` and committed at ``docs/openapi.json``; regenerate with
``python -m openwork_core.daemon.openapi > docs/openapi.json``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, cast, get_args, get_type_hints

import orjson
from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from pydantic import BaseModel
from pydantic.alias_generators import to_camel
from pydantic.json_schema import models_json_schema

from openwork_core.daemon.desktop_schemas import (
    BroadcastResyncBody,
    ContextInspectionBody,
    PermissionAcceptedBody,
    SessionUpdateEnvelopeBody,
    TranscriptPageBody,
    TurnCancelAcceptedBody,
)
from openwork_core.daemon.errors import SOMETIMES, ErrorEnvelope
from openwork_core.daemon.schemas import SteerAcceptedBody
from openwork_core.daemon.security import is_public_path
from openwork_core.session.snapshot import SessionSnapshot
from openwork_core.session.updates import BroadcastResync, SessionUpdate
from openwork_core.session.wire_fields import OMIT_WHEN_NONE_KEY

OPENAPI_PATH = "/v1/openapi.json"
SECURITY_SCHEME = "bearerAuth"

_OPERATION_IDS = {
    "health": "getHealth",
    "put_provider": "putProvider",
    "set_skill": "setSkillDisabled",
    "set_mode": "setPermissionMode",
    "compact": "compactSession",
    "rewind": "rewindSession",
    "transcript": "getTranscript",
    "file_changes": "applyFileChanges",
    "inspect_context": "inspectContext",
    "events": "streamSessionEvents",
}
"""Route function names whose camelCase is not a good name; every other route's id is its
function name in camelCase (``create_session`` → ``createSession``)."""

_RAW_RESPONSES: dict[str, type[BaseModel]] = {
    "getTranscript": TranscriptPageBody,
    "inspectContext": ContextInspectionBody,
    "cancelTurn": TurnCancelAcceptedBody,
    "steerTurn": SteerAcceptedBody,
    "resolvePermission": PermissionAcceptedBody,
}
"""Routes that answer pre-encoded JSON: the schema of what they answer."""

_SSE_OPERATIONS = frozenset({"streamSessionEvents", "streamAllEvents"})

_ERRORS: dict[int, str] = {
    400: "`invalid_request` (text that cannot be stored, a body that cannot be read, a bad "
    "`Last-Event-ID`) or a domain refusal (e.g. `invalid_workspace`, `no_provider`, "
    "`empty_input`)",
    401: "`unauthorized`: no valid bearer token",
    403: "`forbidden_host` (a non-loopback Host) or `forbidden_origin`",
    404: "`not_found`: unknown session, turn or record",
    409: (
        "the session's state refuses it (e.g. `busy`, `session_active`, `turn_not_active`, "
        "`session_owned_elsewhere`)"
    ),
    413: "`payload_too_large`: the body is over `OPENWORK_MAX_BODY_BYTES`",
    422: "`invalid_request` (with the field `errors`) or a domain validation code",
    500: "`internal_error` with the `request_id` of its log line",
    502: "an upstream model call failed (compaction codes)",
    503: (
        "`service_unavailable` (the database does not answer), `actor_stopped` (the session is "
        "shutting down) or `persistence_error`"
    ),
}

DOMAIN_ERRORS: dict[str, frozenset[int]] = {
    "createSession": frozenset({400}),
    "forkSession": frozenset({400, 409}),
    "startTurn": frozenset({400, 409, 422}),
    "steerTurn": frozenset({400, 409, 422}),
    "cancelTurn": frozenset({409}),
    "revertTurn": frozenset({409}),
    "unrevert": frozenset({409}),
    "resolvePermission": frozenset({409}),
    "setPermissionMode": frozenset({409}),
    "compactSession": frozenset({400, 409, 502}),
    "rewindSession": frozenset({400, 409, 502}),
    "applyFileChanges": frozenset({409}),
    "inspectContext": frozenset({400, 409}),
    "getContextOverview": frozenset({400, 409}),
    "streamSessionEvents": frozenset({409}),
    "deleteSession": frozenset({409}),
    "putProvider": frozenset({400, 422}),
    "setSkillDisabled": frozenset({422}),
    "getTranscript": frozenset({404}),
    "putMcpServer": frozenset({409}),
    "deleteMcpServer": frozenset({409}),
}
"""The refusals of the domain a route can answer beyond what its shape implies (409 also
``session_owned_elsewhere`` on a route that drives the session's actor). The statuses the suite
sees are checked against the document (``tests/support/contract.py``)."""

NO_DATABASE = frozenset({"streamAllEvents"})
"""Operations that never touch the database (no 503 ``service_unavailable``)."""


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def operation_id(route: APIRoute) -> str:
    return _OPERATION_IDS.get(route.name, camel(route.name))


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _error_response(status: int) -> dict[str, Any]:
    return {
        "description": _ERRORS[status],
        "content": {"application/json": {"schema": _ref("ErrorEnvelope")}},
    }


def error_statuses(op_id: str, path: str, op: dict[str, Any]) -> frozenset[int]:
    """What the operation answers besides success, from its shape: every request may be refused
    by the Host/Origin guard (403), have a body over the bound (413) or meet an unexpected error
    (500); 401 unless public; 503 when it reads the database; 404 with a path parameter (an
    unknown id); 422 when a body, a query or a header is validated, or a path parameter beyond
    an id (an enum); 400 when a body or a string parameter (a path id too) can hold text that
    cannot be stored; plus the route's domain refusals."""
    params = op.get("parameters", [])
    inputs = [p for p in params if p["in"] in ("query", "header")]
    body = "requestBody" in op
    statuses = {403, 413, 500} | set(DOMAIN_ERRORS.get(op_id, ()))
    if not is_public_path(path):
        statuses.add(401)
        if op_id not in NO_DATABASE:
            statuses.add(503)
    if "{" in path:
        statuses.add(404)
    enum_path = any(p["in"] == "path" and "enum" in _flat(p["schema"]) for p in params)
    if body or inputs or enum_path:
        statuses.add(422)
    if body or any("string" in _flat(p["schema"])["types"] for p in params):
        statuses.add(400)
    return frozenset(statuses)


def _flat(schema: dict[str, Any]) -> dict[str, Any]:
    """A parameter's schema with its ``anyOf`` branches' types and enums gathered."""
    branches = schema.get("anyOf", [schema])
    out: dict[str, Any] = {"types": {b.get("type") for b in branches}}
    if any("enum" in b or "$ref" in b for b in branches):
        out["enum"] = True
    return out


def _named_schemas(rest: dict[str, Any]) -> dict[str, Any]:
    """The schemas of the raw and SSE answers. A camelCase rendering of a type the REST bodies
    also use in snake_case (``UsageBody``) is named ``<Name>Camel``."""
    models: list[type[BaseModel]] = [
        ErrorEnvelope,
        SessionUpdateEnvelopeBody,
        BroadcastResyncBody,
        *_RAW_RESPONSES.values(),
    ]
    _, top = models_json_schema(
        [(m, "serialization") for m in models], ref_template="#/components/schemas/{model}"
    )
    named = cast(dict[str, Any], top.get("$defs", {}))
    renamed = {
        n: f"{n}Camel"
        for n, schema in named.items()
        if n in rest and set(rest[n].get("properties", ())) != set(schema.get("properties", ()))
    }
    text = orjson.dumps(named).decode()
    for old, new in renamed.items():
        text = text.replace(f'"#/components/schemas/{old}"', f'"#/components/schemas/{new}"')
    moved = cast(dict[str, Any], orjson.loads(text))
    return {renamed.get(n, n): s for n, s in moved.items()}


def _finish_operation(op: dict[str, Any], path: str) -> None:
    op_id = op["operationId"]
    responses: dict[str, Any] = op.setdefault("responses", {})
    responses.pop("422", None)  # FastAPI's {"detail"} shape: ours follows
    if op_id in _RAW_RESPONSES:
        success = next((k for k in ("200", "201", "202") if k in responses), "200")
        responses[success] = {
            "description": responses.get(success, {}).get("description", "Successful Response"),
            "content": {"application/json": {"schema": _ref(_RAW_RESPONSES[op_id].__name__)}},
        }
    if op_id == "streamSessionEvents":
        responses["200"] = {
            "description": (
                "Server-Sent Events: `data:` is a SessionUpdateEnvelope, `id:` its sequence; "
                "`event: resync` (with `id:`, the current sequence) when updates were lost (read "
                "the snapshot); the stream ends after a `stream_ended` update"
            ),
            "content": {"text/event-stream": {"schema": _ref("SessionUpdateEnvelopeBody")}},
        }
    if op_id == "streamAllEvents":
        responses["200"] = {
            "description": (
                "Server-Sent Events: `data:` is a SessionUpdateEnvelope, `id:` the broadcast's "
                "sequence; `event: resync` (`BroadcastResyncBody`, with `id:`) when events were "
                "lost (read the sessions again)"
            ),
            "content": {
                "text/event-stream": {
                    "schema": {
                        "oneOf": [
                            _ref("SessionUpdateEnvelopeBody"),
                            _ref(BroadcastResync.__name__),
                        ]
                    }
                }
            },
        }
    if op_id == "getHealth":
        responses["503"] = {
            "description": "degraded: the database does not answer (the same body)",
            "content": {"application/json": {"schema": _ref("HealthBody")}},
        }
    op["security"] = [] if is_public_path(path) else [{SECURITY_SCHEME: []}]
    for status in sorted(error_statuses(op_id, path, op)):
        responses.setdefault(str(status), _error_response(status))


_CAMEL_WIRE: tuple[object, ...] = (SessionUpdate, SessionSnapshot, BroadcastResync)
"""Written by ``session/wire.py``: camelCase names, ``OMIT_WHEN_NONE`` fields left out."""


def _dataclasses(roots: tuple[object, ...]) -> Iterator[type]:
    seen: set[type] = set()
    stack = list(roots)
    while stack:
        current = stack.pop()
        stack.extend(get_args(current))
        if isinstance(current, type) and dataclasses.is_dataclass(current):
            if current in seen:
                continue
            seen.add(current)
            yield current
            stack.extend(get_type_hints(current).values())


def _left_out_when_none() -> dict[str, set[str]]:
    """Per camelCase schema name: the wire names ``session/wire.py`` leaves out when ``None``."""
    omitted: dict[str, set[str]] = {}
    for cls in _dataclasses(_CAMEL_WIRE):
        names = {
            to_camel(f.name) for f in dataclasses.fields(cls) if f.metadata.get(OMIT_WHEN_NONE_KEY)
        }
        for name in (cls.__name__, f"{cls.__name__}Camel"):
            omitted[name] = names
    return omitted


def _refs(node: object) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref.rpartition("/")[2]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _reachable(schemas: dict[str, Any], roots: list[object]) -> set[str]:
    found: set[str] = set()
    stack = [n for root in roots for n in _refs(root)]
    while stack:
        name = stack.pop()
        if name not in found and name in schemas:
            found.add(name)
            stack.extend(_refs(schemas[name]))
    return found


def _responses_name_every_field(document: dict[str, Any]) -> None:
    """pydantic marks a field with a default as optional; in an answer every field is present
    (``null`` at worst) unless the wire leaves it out (``OMIT_WHEN_NONE``, or a response field
    marked ``SOMETIMES``), so a schema only answers use requires all the others. A schema a
    request body uses keeps pydantic's ``required``: there a default makes a field optional."""
    schemas: dict[str, Any] = document["components"]["schemas"]
    operations = [op for item in document["paths"].values() for op in item.values()]
    requests = _reachable(schemas, [op.get("requestBody", {}) for op in operations])
    answers = _reachable(schemas, [op.get("responses", {}) for op in operations])
    omitted = _left_out_when_none()
    marker = next(iter(SOMETIMES))
    for name in answers - requests:
        properties: dict[str, Any] = schemas[name].get("properties", {})
        if properties:
            sometimes = {p for p, s in properties.items() if s.pop(marker, False)}
            absent = sometimes | omitted.get(name, set())
            schemas[name]["required"] = [p for p in properties if p not in absent]
    for schema in schemas.values():
        for prop in schema.get("properties", {}).values():
            prop.pop(marker, None)


_METHOD_NOT_ALLOWED = {
    "description": (
        "`method_not_allowed`: the path exists, the method does not (any method a path does "
        "not list here)"
    ),
    "content": {"application/json": {"schema": _ref("ErrorEnvelope")}},
}


def build_openapi(app: FastAPI) -> dict[str, Any]:
    document = get_openapi(
        title=app.title,
        version=app.version,
        description=(
            "The OpenWork daemon's HTTP + SSE contract (docs/api.md). Every route but "
            "`GET /v1/health`, this document and the `/ui/` page needs `Authorization: Bearer`. "
            "A method a path does not list is answered 405 `method_not_allowed` "
            "(`components.responses.MethodNotAllowed`); an unknown path 404 `not_found`."
        ),
        routes=app.routes,
    )
    components = document.setdefault("components", {})
    schemas: dict[str, Any] = components.setdefault("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    schemas.update(_named_schemas(schemas))
    components["securitySchemes"] = {
        SECURITY_SCHEME: {
            "type": "http",
            "scheme": "bearer",
            "description": "the token of daemon.json (OPENWORK_TOKEN)",
        }
    }
    components["responses"] = {"MethodNotAllowed": _METHOD_NOT_ALLOWED}
    for path, item in document.get("paths", {}).items():
        for op in item.values():
            _finish_operation(op, path)
    _responses_name_every_field(document)
    return cast(dict[str, Any], orjson.loads(orjson.dumps(document, option=orjson.OPT_SORT_KEYS)))


def install_openapi(app: FastAPI) -> None:
    """Replace ``app.openapi`` (call after every route is added)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = build_openapi(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def document_bytes(document: dict[str, Any]) -> bytes:
    """The committed form: sorted keys, two-space indent, final newline."""
    return orjson.dumps(document, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"
