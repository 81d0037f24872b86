"""The OpenAPI document a client can be generated from (issue 16 point 3).

FastAPI's document, then: operation ids named for people (``createSession``, ``startTurn``);
a bearer security scheme on every operation but the public ones; every error response listed
with the real envelope ``{"error": {"code", "message"}}`` instead of FastAPI's ``{"detail"}``;
a response schema for routes that answer raw JSON; the SSE payloads as named schemas (the update
kinds as a discriminated union). Served without auth at ``GET /v1/openapi.json`` and committed at
``docs/openapi.json``; regenerate with ``python -m openwork_core.daemon.openapi > docs/openapi.json``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast, get_args, get_type_hints

import orjson
from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from pydantic import BaseModel
from pydantic.alias_generators import to_camel
from pydantic.json_schema import models_json_schema

from openwork_chat_state.messages import Message, ToolDefinition
from openwork_core.context.budget import ContextBudgetEstimate
from openwork_core.context.builder import SystemContextPart
from openwork_core.context.limits import ModelContextLimits
from openwork_core.context.normalize import ProjectionSummary
from openwork_core.daemon.desktop_schemas import (
    ContextInspectionBody,
    ErrorEnvelope,
    PermissionAcceptedBody,
    SessionUpdateEnvelopeBody,
    TranscriptPageBody,
    TurnCancelAcceptedBody,
)
from openwork_core.daemon.errors import ERROR_DESCRIPTIONS, ErrorBody
from openwork_core.session.snapshot import SessionSnapshot
from openwork_core.session.updates import SessionUpdate
from openwork_core.session.wire_fields import OMIT_WHEN_NONE_KEY

OPENAPI_PATH = "/v1/openapi.json"
SECURITY_SCHEME = "bearerAuth"
PUBLIC_OPERATIONS = frozenset({"getHealth"})

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
    "resolvePermission": PermissionAcceptedBody,
}
"""Routes that answer pre-encoded JSON: the schema of what they answer."""

_SSE_OPERATIONS = frozenset({"streamSessionEvents", "streamAllEvents"})

_ERRORS: dict[int, str] = {
    400: "the request cannot be served as asked (e.g. `invalid_workspace`, `no_provider`, `empty_input`)",
    401: "`unauthorized`: no valid bearer token",
    403: "`forbidden_host` (a non-loopback Host) or `forbidden_origin`",
    404: "`not_found`: unknown session, turn or record",
    409: (
        "the session's state refuses it (e.g. `busy`, `session_active`, `turn_not_active`, "
        "`session_owned_elsewhere`)"
    ),
    422: "`invalid_request` (with the field `errors`) or a domain validation code",
    502: "an upstream model call failed (compaction codes)",
    503: (
        "`service_unavailable` (the database does not answer), `actor_stopped` (the session is "
        "shutting down) or `persistence_error`"
    ),
}

_EXTRA_ERRORS: dict[str, tuple[int, ...]] = {
    "createSession": (400,),
    "startTurn": (400, 409, 503),
    "cancelTurn": (409, 503),
    "resolvePermission": (409, 503),
    "setPermissionMode": (409, 503),
    "compactSession": (400, 409, 502, 503),
    "rewindSession": (400, 409, 502, 503),
    "applyFileChanges": (409, 503),
    "inspectContext": (400, 409, 503),
    "getContextOverview": (400, 409, 503),
    "streamSessionEvents": (409, 503),
    "deleteSession": (409,),
    "putProvider": (400,),
    "putMcpServer": (409,),
    "deleteMcpServer": (409,),
}
"""Beyond 401/403/404/422: what each route can answer (409 also ``session_owned_elsewhere`` for a
route that drives the session's actor; 503 ``actor_stopped`` / ``persistence_error``)."""


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


def _named_schemas() -> dict[str, Any]:
    models: list[type[BaseModel]] = [
        ErrorBody,  # kept from when FastAPI documented errors.py's envelope (add-only)
        ErrorEnvelope,
        SessionUpdateEnvelopeBody,
        *_RAW_RESPONSES.values(),
    ]
    _, top = models_json_schema(
        [(m, "serialization") for m in models], ref_template="#/components/schemas/{model}"
    )
    return cast(dict[str, Any], top.get("$defs", {}))


def _finish_operation(op: dict[str, Any], path: str, method: str) -> None:
    op_id = op["operationId"]
    responses: dict[str, Any] = op.setdefault("responses", {})
    responses.pop("422", None)  # FastAPI's {"detail"} shape: ours follows
    for status, description in ERROR_DESCRIPTIONS.items():
        if status != 422:  # a route's own response for a status wins
            responses.setdefault(
                str(status),
                {
                    "description": description,
                    "content": {"application/json": {"schema": _ref("ErrorEnvelope")}},
                },
            )
    if op_id in _RAW_RESPONSES:
        success = next((k for k in ("200", "201", "202") if k in responses), "200")
        responses[success] = {
            "description": responses.get(success, {}).get("description", "Successful Response"),
            "content": {"application/json": {"schema": _ref(_RAW_RESPONSES[op_id].__name__)}},
        }
    if op_id in _SSE_OPERATIONS:
        responses["200"] = {
            "description": (
                "Server-Sent Events: `data:` is a SessionUpdateEnvelope, `id:` its sequence; "
                "`event: resync` when updates were lost (read the snapshot)"
            ),
            "content": {"text/event-stream": {"schema": _ref("SessionUpdateEnvelopeBody")}},
        }
    if op_id == "getHealth":
        responses["503"] = {
            "description": "degraded: the database does not answer (the same body)",
            "content": {"application/json": {"schema": _ref("HealthBody")}},
        }
    statuses: set[int] = set(_EXTRA_ERRORS.get(op_id, ()))
    if op_id not in PUBLIC_OPERATIONS:
        statuses |= {401, 403, 503}
        op["security"] = [{SECURITY_SCHEME: []}]
    else:
        statuses.add(403)
        op["security"] = []
    if "{" in path:
        statuses.add(404)
    if op.get("parameters") or op.get("requestBody"):
        statuses.add(422)
    for status in sorted(statuses):
        responses.setdefault(str(status), _error_response(status))


_CAMEL_WIRE: tuple[object, ...] = (SessionUpdate, SessionSnapshot)
"""Written by ``session/wire.py``: camelCase names, ``OMIT_WHEN_NONE`` fields left out."""
_PLAIN_WIRE: tuple[object, ...] = (
    SystemContextPart,
    Message,
    ToolDefinition,
    ContextBudgetEstimate,
    ModelContextLimits,
    ProjectionSummary,
)
"""Written with ``orjson`` as they are (the inspection): every field, its own name."""


def _dataclasses(roots: tuple[object, ...]) -> dict[str, type]:
    found: dict[str, type] = {}
    stack = list(roots)
    while stack:
        current = stack.pop()
        stack.extend(get_args(current))
        if isinstance(current, type) and dataclasses.is_dataclass(current):
            if current.__name__ in found:
                continue
            found[current.__name__] = current
            stack.extend(get_type_hints(current).values())
    return found


def _wire_required(cls: type, camel_case: bool) -> list[str]:
    return [
        to_camel(f.name) if camel_case else f.name
        for f in dataclasses.fields(cls)
        if not (camel_case and f.metadata.get(OMIT_WHEN_NONE_KEY))
    ]


def _always_present(schemas: dict[str, Any]) -> None:
    """pydantic marks a dataclass field with a default as optional; on our wire every field is
    present (``null`` at worst) unless the wire leaves it out, and a discriminator's ``type``
    must be required for clients."""
    for camel_case, roots in ((True, _CAMEL_WIRE), (False, _PLAIN_WIRE)):
        for name, cls in _dataclasses(roots).items():
            if name in schemas and schemas[name].get("properties"):
                schemas[name]["required"] = _wire_required(cls, camel_case)


def build_openapi(app: FastAPI) -> dict[str, Any]:
    document = get_openapi(
        title=app.title,
        version=app.version,
        description=(
            "The OpenWork daemon's HTTP + SSE contract (docs/api.md). Every route but "
            "`GET /v1/health`, this document and the `/ui/` page needs `Authorization: Bearer`."
        ),
        routes=app.routes,
    )
    schemas: dict[str, Any] = document.setdefault("components", {}).setdefault("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    schemas.update(_named_schemas())
    _always_present(schemas)
    document["components"]["securitySchemes"] = {
        SECURITY_SCHEME: {
            "type": "http",
            "scheme": "bearer",
            "description": "the token of daemon.json (OPENWORK_TOKEN)",
        }
    }
    for path, item in document.get("paths", {}).items():
        for method, op in item.items():
            _finish_operation(op, path, method)
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
