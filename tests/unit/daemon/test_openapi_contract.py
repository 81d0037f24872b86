"""The served OpenAPI document only grows (daemon-api.md: "names, paths, fields and error codes
below do not change"; issue 10: "the served OpenAPI unchanged except additions").

``data/openapi_baseline.json`` is the document served before the routers were split (captured
from ``create_app`` at that commit); every path, method, parameter, response status and request
schema field in it must still be served."""

from __future__ import annotations

import asyncio
import json
from enum import Enum
from pathlib import Path
from typing import Any, cast, get_args

from fastapi.routing import APIRoute

from openwork_core.daemon.app import create_app
from openwork_core.daemon.openapi import DOMAIN_ERRORS, NO_DATABASE
from openwork_core.daemon.security import is_public_path
from openwork_core.service import OpenWorkCore

BASELINE = Path(__file__).parent / "data" / "openapi_baseline.json"

# The 422 response used to be documented as FastAPI's {"detail": [...]}, a body the daemon never
# sent; it now documents the error envelope actually sent, so these two schemas are unreferenced.
DOCUMENTED_BODY_CORRECTION = {"HTTPValidationError", "ValidationError", "ErrorBody"}
"""``ErrorBody`` was a second copy of ``ErrorDetail`` (issue 25: one type per concept)."""


def _served() -> dict[str, Any]:
    app = create_app(
        cast(OpenWorkCore, object()),
        token="t",
        allowed_origins=frozenset(),
        allow_remote=False,
        version="0.0.0",
        shutdown=asyncio.Event(),
    )
    return app.openapi()


def test_every_operation_of_the_baseline_is_still_served_with_its_parameters_and_statuses() -> None:
    """Paths, methods, parameters (name, location, required) and success statuses are only
    added. Error statuses are the ones the operation really answers (issue 25 point 3: the
    baseline listed every error status on every operation, e.g. 401 on the public health check);
    ``test_each_operation_declares_exactly_the_error_statuses_its_route_can_answer`` checks
    them."""
    baseline = json.loads(BASELINE.read_text())
    served = _served()
    lost: list[str] = []
    for path, operations in baseline["paths"].items():
        for method, operation in operations.items():
            now = served["paths"].get(path, {}).get(method)
            if now is None:
                lost.append(f"{method.upper()} {path}")
                continue
            for status in operation["responses"]:
                if int(status) < 400 and status not in now["responses"]:
                    lost.append(f"{method.upper()} {path} → {status}")
            params = {
                (p["name"], p["in"]): p.get("required", False) for p in now.get("parameters", [])
            }
            for p in operation.get("parameters", []):
                key = (p["name"], p["in"])
                if key not in params:
                    lost.append(f"{method.upper()} {path} parameter {key}")
                elif params[key] and not p.get("required", False):
                    lost.append(f"{method.upper()} {path} parameter {key} became required")
            if ("requestBody" in operation) != ("requestBody" in now):
                lost.append(f"{method.upper()} {path} request body")
    assert lost == []


def _uses(document: dict[str, Any]) -> dict[str, list[tuple[str, str, str]]]:
    """Schema name → the (path, method, where) places that reference it directly."""
    found: dict[str, list[tuple[str, str, str]]] = {}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            places = {"request": operation.get("requestBody", {})}
            for status, response in operation.get("responses", {}).items():
                places[status] = response
            for where, place in places.items():
                ref = place.get("content", {}).get("application/json", {}).get("schema", {})
                name = str(ref.get("$ref", "")).rpartition("/")[2]
                if name:
                    found.setdefault(name, []).append((path, method, where))
    return found


def _schema_at(document: dict[str, Any], place: tuple[str, str, str]) -> dict[str, Any] | None:
    path, method, where = place
    operation = document["paths"].get(path, {}).get(method)
    if operation is None:
        return None
    holder = (
        operation.get("requestBody", {})
        if where == "request"
        else operation.get("responses", {}).get(where, {})
    )
    ref = holder.get("content", {}).get("application/json", {}).get("schema", {})
    name = str(ref.get("$ref", "")).rpartition("/")[2]
    schema = document["components"]["schemas"].get(name)
    return cast(dict[str, Any] | None, schema)


def test_every_schema_of_the_baseline_keeps_its_fields_and_requires_no_new_one() -> None:
    """A client's body stays valid: no field dropped, no field newly required. A schema renamed
    by the client-ready document (issue 16) is compared where the baseline used it."""
    document = json.loads(BASELINE.read_text())
    baseline = document["components"]["schemas"]
    served_document = _served()
    served = served_document["components"]["schemas"]
    uses = _uses(document)
    lost: list[str] = []
    for name, schema in baseline.items():
        if name in DOCUMENTED_BODY_CORRECTION:
            continue
        now = served.get(name)
        if now is None and uses.get(name):
            now = _schema_at(served_document, uses[name][0])
        if now is None:
            lost.append(name)
            continue
        for field in schema.get("properties", {}):
            if field not in now.get("properties", {}):
                lost.append(f"{name}.{field}")
        in_request = any(where == "request" for _, _, where in uses.get(name, ()))
        for field in set(now.get("required", ())) - set(schema.get("required", ())):
            if in_request:  # a response may promise more; a request may not demand more
                lost.append(f"{name}.{field} became required")
    assert lost == []


def test_every_operation_documents_the_error_envelope() -> None:
    """daemon-api.md §2: errors are {"error": {code, message}}; 422 documents that body."""
    served = _served()
    for path, operations in served["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            assert {"403", "413", "500"} <= set(responses), (method, path)
            for status, response in responses.items():
                if int(status) < 400 or "content" not in response:
                    continue
                if (path, status) == ("/v1/health", "503"):
                    continue  # health reports a degraded database in its own body
                ref = response["content"]["application/json"]["schema"]
                assert ref == {"$ref": "#/components/schemas/ErrorEnvelope"}, (method, path, status)
    assert served["components"]["responses"]["MethodNotAllowed"]["content"] == {
        "application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}
    }


def _strings(annotation: object) -> bool:
    """``str``, a ``NewType`` of it (an id), or a union or ``Annotated`` holding one."""
    if annotation is str or getattr(annotation, "__supertype__", None) is str:
        return True
    return any(_strings(a) for a in get_args(annotation))


def _route_statuses(route: APIRoute) -> set[int]:
    """What the route can answer besides success, read from the route itself (its path, its
    parameters and body as FastAPI resolved them), not from the document."""
    dependant = route.dependant
    inputs = [*dependant.query_params, *dependant.header_params]
    body = route.body_field is not None
    statuses = {403, 413, 500}
    if not is_public_path(route.path):
        statuses |= {401, 503}
    if dependant.path_params:
        statuses.add(404)
    enum_in_path = any(
        isinstance(p.field_info.annotation, type) and issubclass(p.field_info.annotation, Enum)
        for p in dependant.path_params
    )
    if body or inputs or enum_in_path:
        statuses.add(422)
    if body or any(_strings(p.field_info.annotation) for p in [*inputs, *dependant.path_params]):
        statuses.add(400)
    return statuses


def test_each_operation_declares_exactly_the_error_statuses_its_route_can_answer() -> None:
    """Issue 25 point 3: per-operation error statuses that are true: the guards' (403 always,
    401 unless public, 413 for any body over the bound, 500), the validation's (404 for a path
    id, 422 for a validated body, query, header or enum path parameter, 400 for text that cannot
    be stored in a body or any string parameter) and the route's domain refusals — so ``getHealth`` has no 401 and
    ``streamAllEvents`` no 503 (it reads no database). The statuses the suite sees are checked
    against the document as they come (``tests/support/contract.py``)."""
    app = create_app(
        cast(OpenWorkCore, object()),
        token="t",
        allowed_origins=frozenset(),
        allow_remote=False,
        version="0.0.0",
        shutdown=asyncio.Event(),
    )
    document = app.openapi()
    wrong: list[str] = []
    for route in app.routes:
        if not isinstance(route, APIRoute) or not route.include_in_schema:
            continue
        for method in route.methods:
            operation = document["paths"][route.path][method.lower()]
            op_id = operation["operationId"]
            expected = _route_statuses(route) | set(DOMAIN_ERRORS.get(op_id, ()))
            if op_id in NO_DATABASE:
                expected.discard(503)
            if op_id == "getHealth":
                expected.add(503)  # its own degraded body
            declared = {int(s) for s in operation["responses"] if int(s) >= 400}
            if declared != expected:
                wrong.append(f"{op_id}: {sorted(declared)} != {sorted(expected)}")
    assert wrong == []
    health = document["paths"]["/v1/health"]["get"]["responses"]
    assert "401" not in health
    assert "503" not in document["paths"]["/v1/events"]["get"]["responses"]
