"""Request bounds as pure rules (docs/reliability.md "Bounds", "NUL-safe storage";
daemon-api.md §2 "never a 500 for bad input")."""

from __future__ import annotations

import asyncio

import pytest
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


def test_every_route_that_reads_a_body_refuses_unstorable_text_in_it() -> None:
    """daemon-api.md §2 "never a 500 for bad input": each body a route reads is a
    ``RequestModel``, whose check runs before any field is read (a ``PATCH`` title and an MCP
    server's tool filter once reached PostgreSQL with a U+0000 and answered 500)."""
    app = create_app(
        None,  # type: ignore[arg-type]  # no request is made
        token="t",
        allowed_origins=frozenset(),
        allow_remote=False,
        version="test",
        shutdown=asyncio.Event(),
    )
    bodies = {
        f"{sorted(route.methods)[0]} {route.path}": route.body_field.field_info.annotation
        for route in app.routes
        if isinstance(route, APIRoute) and route.body_field is not None
    }
    assert len(bodies) >= 12
    unchecked = {
        route: body
        for route, body in bodies.items()
        if not (isinstance(body, type) and issubclass(body, RequestModel))
    }
    assert unchecked == {}
