"""The served OpenAPI document only grows (daemon-api.md: "names, paths, fields and error codes
below do not change"; issue 10: "the served OpenAPI unchanged except additions").

``data/openapi_baseline.json`` is the document served before the routers were split (captured
from ``create_app`` at that commit); every path, method, parameter, response status and request
schema field in it must still be served."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

from openwork_core.daemon.app import create_app
from openwork_core.service import OpenWorkCore

BASELINE = Path(__file__).parent / "data" / "openapi_baseline.json"

# The 422 response used to be documented as FastAPI's {"detail": [...]}, a body the daemon never
# sent; it now documents the error envelope actually sent, so these two schemas are unreferenced.
DOCUMENTED_BODY_CORRECTION = {"HTTPValidationError", "ValidationError"}


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
    """Paths, methods, parameters (name, location, required) and status codes are only added."""
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
                if status not in now["responses"]:
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


def test_every_schema_of_the_baseline_keeps_its_fields_and_requires_no_new_one() -> None:
    """A client's body stays valid: no field dropped, no field newly required."""
    baseline = json.loads(BASELINE.read_text())["components"]["schemas"]
    served = _served()["components"]["schemas"]
    lost: list[str] = []
    for name, schema in baseline.items():
        if name in DOCUMENTED_BODY_CORRECTION:
            continue
        now = served.get(name)
        if now is None:
            lost.append(name)
            continue
        for field in schema.get("properties", {}):
            if field not in now.get("properties", {}):
                lost.append(f"{name}.{field}")
        for field in set(now.get("required", ())) - set(schema.get("required", ())):
            lost.append(f"{name}.{field} became required")
    assert lost == []


def test_every_operation_documents_the_error_envelope() -> None:
    """daemon-api.md §2: errors are {"error": {code, message}}; 422 documents that body."""
    served = _served()
    for path, operations in served["paths"].items():
        for method, operation in operations.items():
            for status in ("400", "404", "413", "422", "500"):
                ref = operation["responses"][status]["content"]["application/json"]["schema"]
                assert ref == {"$ref": "#/components/schemas/ErrorEnvelope"}, (method, path, status)
