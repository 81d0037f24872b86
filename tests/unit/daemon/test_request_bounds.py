"""Request bounds as pure rules (docs/reliability.md "Bounds", "NUL-safe storage";
daemon-api.md §2 "never a 500 for bad input")."""

from __future__ import annotations

import asyncio
from urllib.parse import quote

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from pydantic import TypeAdapter, ValidationError

from openwork_core.body import UNSTORABLE_TEXT, RequestModel
from openwork_core.daemon.app import create_app
from openwork_core.daemon.schemas import CreateSessionBody, ProviderBody, StartTurnBody
from openwork_core.daemon.validation import (
    INT64_MAX,
    UNKNOWN_ID,
    SessionIdPath,
    last_event_cursor,
)

SESSION_ID: TypeAdapter[str] = TypeAdapter(SessionIdPath)


@pytest.mark.parametrize(("header", "cursor"), [(None, None), ("", None), (" 42 ", 42), ("0", 0)])
def test_a_decimal_last_event_id_is_a_cursor(header: str | None, cursor: int | None) -> None:
    assert last_event_cursor(header) == cursor


@pytest.mark.parametrize("header", ["²", "٣", "-1", "1e3", "abc", str(INT64_MAX + 1), "1" * 20])
def test_any_other_last_event_id_is_refused(header: str) -> None:
    with pytest.raises(ValueError, match="decimal sequence"):
        last_event_cursor(header)


def _types(exc: ValidationError) -> set[str]:
    return {str(e["type"]) for e in exc.errors()}


@pytest.mark.parametrize("value", ["ses\x00", "ses_\udc80"])
def test_an_id_postgresql_cannot_hold_is_unstorable_text(value: str) -> None:
    with pytest.raises(ValidationError) as caught:
        SESSION_ID.validate_python(value)
    assert _types(caught.value) == {UNSTORABLE_TEXT}


@pytest.mark.parametrize("value", ["", "a b", "s" * 257, "ses_é", "ses_\ufffd"])
def test_an_id_we_could_not_have_minted_is_unknown(value: str) -> None:
    with pytest.raises(ValidationError) as caught:
        SESSION_ID.validate_python(value)
    assert _types(caught.value) == {UNKNOWN_ID}


def test_ids_we_and_providers_mint_pass() -> None:
    for value in ("ses_0123abcd", "turn_ff", "call_AbC-1.2:3", "toolu_01XyZ", "s" * 256):
        assert SESSION_ID.validate_python(value) == value


@pytest.mark.parametrize(
    "body",
    [
        {"workspace": "/w", "provider": "p\x00"},
        {"workspace": "/w", "model": "\ud800"},
        {"workspace": "/w", "agent": "default", "x\x00": 1},
    ],
)
def test_unstorable_text_anywhere_in_a_body_is_refused_before_its_fields(body: object) -> None:
    with pytest.raises(ValidationError) as caught:
        CreateSessionBody.model_validate(body)
    assert UNSTORABLE_TEXT in _types(caught.value)


def test_nested_unstorable_text_in_a_turn_is_refused() -> None:
    body = {"client_request_id": "c", "input": [{"type": "text", "text": "a\x00"}]}
    with pytest.raises(ValidationError) as caught:
        StartTurnBody.model_validate(body)
    assert UNSTORABLE_TEXT in _types(caught.value)


@pytest.mark.parametrize(
    "body",
    [
        {"workspace": "/w", "provider": " "},
        {"workspace": "/w", "model": "\t"},
        {"workspace": "/w", "agent": "a" * 201},
    ],
)
def test_blank_or_overlong_names_are_field_errors(body: object) -> None:
    with pytest.raises(ValidationError) as caught:
        CreateSessionBody.model_validate(body)
    assert UNSTORABLE_TEXT not in _types(caught.value)


def test_token_counts_beyond_int32_are_field_errors() -> None:
    with pytest.raises(ValidationError):
        ProviderBody.model_validate(
            {"kind": "openai-chat", "models": [{"name": "m", "context_window": 10**30}]}
        )


def _app() -> FastAPI:
    return create_app(
        None,  # type: ignore[arg-type]  # a request that reaches a route fails on it: a 500
        token="t",
        allowed_origins=frozenset(),
        allow_remote=False,
        version="test",
        shutdown=asyncio.Event(),
    )


def test_every_route_that_reads_a_body_refuses_unstorable_text_in_it() -> None:
    """daemon-api.md §2 "never a 500 for bad input": each body a route reads is a
    ``RequestModel``, whose check runs before any field is read (a ``PATCH`` title and an MCP
    server's tool filter once reached PostgreSQL with a U+0000 and answered 500)."""
    bodies = {
        f"{sorted(route.methods)[0]} {route.path}": route.body_field.field_info.annotation
        for route in _app().routes
        if isinstance(route, APIRoute) and route.body_field is not None
    }
    assert len(bodies) >= 12
    unchecked = {
        route: body
        for route, body in bodies.items()
        if not (isinstance(body, type) and issubclass(body, RequestModel))
    }
    assert unchecked == {}


async def test_a_nul_in_any_path_or_query_parameter_never_reaches_a_route() -> None:
    """docs/reliability.md "NUL-safe storage": every route's every path and query parameter,
    given U+0000 (the others plausible), is answered before the route runs (here a route that
    ran would fail on the missing core: a 500). ``GET /v1/sessions?workspace=`` once reached
    PostgreSQL with it."""
    app = _app()
    tried: list[str] = []
    wrong: list[str] = []
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1", headers={"Authorization": "Bearer t"}
    ) as client:
        for route in app.routes:
            if not isinstance(route, APIRoute):
                continue
            params = route.dependant.path_params + route.dependant.query_params
            for param in params:
                values = {p.name: "x" for p in route.dependant.path_params} | {param.name: "a\x00b"}
                path = route.path_format.format(**{k: quote(v) for k, v in values.items()})
                query = {param.name: "a\x00b"} if param in route.dependant.query_params else {}
                method = sorted(route.methods)[0]
                response = await client.request(method, path, params=query)
                tried.append(f"{method} {route.path} {param.name}")
                if response.status_code >= 500:
                    wrong.append(f"{tried[-1]}: {response.status_code} {response.text[:120]}")
    assert len(tried) >= 30
    assert wrong == []
