"""Every REST answer and every SSE payload the suite sees, checked against the committed
``docs/openapi.json`` with additional properties forbidden (issue 25 point 3).

The HTTP clients of ``tests/support`` (``Daemon.client``, ``LiveApp.client``, ``contract_client``)
carry ``check_response`` as an httpx response hook, and the SSE readers pass each event's data to
``check_event``: an answer whose status the operation does not declare, or whose body does not
validate (a missing required field, a field the schema does not name, a wrong type or enum
value, a timestamp in another form than the one ``docs/api.md`` promises: RFC 3339, UTC, ``Z``),
fails the test that received it, at the request. Paths the document does not describe (``/ui/``,
unknown routes) are not checked."""

from __future__ import annotations

import functools
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import jsonschema_rs
import orjson

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


class ContractViolation(AssertionError):
    """An answer of the daemon that the committed OpenAPI document does not allow."""


def _strict(node: object) -> object:
    """Every object schema that names its properties forbids any other."""
    if isinstance(node, list):
        return [_strict(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _strict(v) for k, v in node.items()}
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


@functools.cache
def _document() -> dict[str, Any]:
    document: dict[str, Any] = orjson.loads(DOCUMENT.read_bytes())
    return document


@functools.cache
def _components() -> dict[str, Any]:
    strict = _strict(_document()["components"]["schemas"])
    assert isinstance(strict, dict)
    return {"schemas": strict}


@functools.cache
def _operations() -> tuple[tuple[re.Pattern[str], str, str], ...]:
    """(path pattern, method, path template), static paths before templated ones."""
    found = []
    for template, item in _document()["paths"].items():
        pattern = re.compile("^" + re.sub(r"\\{[^/]+\\}", "[^/]+", re.escape(template)) + "$")
        for method in item:
            found.append((pattern, method, template))
    return tuple(sorted(found, key=lambda f: f[2].count("{")))


def _operation(method: str, path: str) -> tuple[str, dict[str, Any]] | bool | None:
    """The operation serving ``method path``; ``True`` for a documented path without that
    method (405), ``None`` for a path the document does not have."""
    known_path = False
    for pattern, verb, template in _operations():
        if pattern.match(path):
            known_path = True
            if verb == method.lower():
                operation: dict[str, Any] = _document()["paths"][template][verb]
                return template, operation
    return True if known_path else None


_UTC_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z")


def utc_timestamp(value: str) -> bool:
    """The one timestamp format of the wire (issue 25 point 3): RFC 3339 in UTC, written with
    ``Z`` (no offset, no space, a real date)."""
    if _UTC_TIMESTAMP.fullmatch(value) is None:
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


@functools.cache
def _validator(schema_json: str) -> jsonschema_rs.Draft202012Validator:
    schema = orjson.loads(schema_json)
    return jsonschema_rs.Draft202012Validator(
        {**schema, "components": _components()},
        validate_formats=True,
        formats={"date-time": utc_timestamp},
    )


def validate(schema: dict[str, Any], value: object, where: str) -> None:
    validator = _validator(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS).decode())
    errors = [f"{e.instance_path}: {e.message}" for e in validator.iter_errors(value)]
    if errors:
        raise ContractViolation(f"{where} does not match docs/openapi.json: {errors[:5]}")


_ENVELOPE = {"$ref": "#/components/schemas/ErrorEnvelope"}


def check_body(method: str, path: str, status: int, media: str, body: bytes) -> None:
    found = _operation(method, path)
    where = f"{method} {path} → {status}"
    if found is None:
        return
    if found is True:
        if status != 405:
            raise ContractViolation(f"{where}: a method the path does not list answers 405")
        validate(_ENVELOPE, orjson.loads(body), where)
        return
    assert isinstance(found, tuple)
    _, operation = found
    declared = operation["responses"].get(str(status))
    if declared is None:
        raise ContractViolation(f"{where}: {operation['operationId']} does not declare {status}")
    content = declared.get("content")
    if content is None or status == 204:
        if body:
            raise ContractViolation(f"{where}: a body where the document declares none")
        return
    if media.startswith("text/event-stream"):
        if "text/event-stream" not in content:
            raise ContractViolation(f"{where}: an event stream where the document has none")
        return
    if "application/json" not in content:
        raise ContractViolation(f"{where}: {media} where the document declares {list(content)}")
    validate(content["application/json"]["schema"], orjson.loads(body), where)


async def check_response(response: httpx.Response) -> None:
    """The httpx response hook: reads a JSON answer (an event stream is checked event by
    event) and validates it."""
    media = response.headers.get("content-type", "")
    request = response.request
    if media.startswith("text/event-stream"):
        check_body(request.method, request.url.path, response.status_code, media, b"")
        return
    body = await response.aread()
    check_body(request.method, request.url.path, response.status_code, media, body)


def check_event(path: str, data: object) -> None:
    """One SSE ``data:`` payload of ``GET path`` against the stream's declared schema."""
    found = _operation("GET", path)
    if not isinstance(found, tuple):
        return
    _, operation = found
    schema = operation["responses"]["200"]["content"]["text/event-stream"]["schema"]
    validate(schema, data, f"an event of GET {path}")


def contract_client(**kwargs: Any) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` whose every answer is checked against the document."""
    hooks = kwargs.pop("event_hooks", {})
    hooks = {**hooks, "response": [*hooks.get("response", ()), check_response]}
    return httpx.AsyncClient(event_hooks=hooks, **kwargs)
