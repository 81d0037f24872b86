"""Opaque page cursors (issue 16): URL-safe base64 of a small JSON object. A client passes back
the ``next_cursor`` it was given; anything else is an invalid request."""

from __future__ import annotations

import base64
import binascii
from datetime import datetime

import orjson

from openwork_core.ids import SessionId
from openwork_core.storage.desktop_records import SessionKey


class InvalidCursor(ValueError):
    """Not a cursor this daemon issued."""


def _encode(value: dict[str, str | int]) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(value)).decode().rstrip("=")


def _decode(cursor: str) -> dict[str, object]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value = orjson.loads(raw)
    except (binascii.Error, ValueError) as exc:
        raise InvalidCursor("invalid cursor") from exc
    if not isinstance(value, dict):
        raise InvalidCursor("invalid cursor")
    return value


def session_cursor(key: SessionKey) -> str:
    return _encode({"c": key.created_at.isoformat(), "s": key.session_id})


def parse_session_cursor(cursor: str) -> SessionKey:
    value = _decode(cursor)
    created, session_id = value.get("c"), value.get("s")
    if not isinstance(created, str) or not isinstance(session_id, str):
        raise InvalidCursor("invalid session cursor")
    try:
        created_at = datetime.fromisoformat(created)
    except ValueError as exc:
        raise InvalidCursor("invalid session cursor") from exc
    if created_at.tzinfo is None:
        raise InvalidCursor("invalid session cursor")
    return SessionKey(created_at=created_at, session_id=SessionId(session_id))


def turn_cursor(sequence: int) -> str:
    return _encode({"t": sequence})


def parse_turn_cursor(cursor: str) -> int:
    sequence = _decode(cursor).get("t")
    if not isinstance(sequence, int) or isinstance(sequence, bool) or sequence < 1:
        raise InvalidCursor("invalid turn cursor")
    return sequence
