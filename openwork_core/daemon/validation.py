"""Input bounds of the HTTP surface (docs/reliability.md "Bounds", "NUL-safe storage").

Pure rules, applied by pydantic while a request is parsed, so a refused request writes nothing:
- every string of a request (body, path, query) that PostgreSQL cannot hold (U+0000, a lone
  surrogate) → 400 ``invalid_request`` (error type ``unstorable_text``);
- an id that cannot be one we minted (length, charset) → 404 ``not_found`` (``unknown_id``);
- names are non-blank and bounded, integers fit PostgreSQL's int64 → 422 ``invalid_request``.
"""

from __future__ import annotations

import re
from typing import Annotated, TypeVar

from fastapi import Query
from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from openwork_core.body import unstorable
from openwork_core.ids import ClientRequestId, CompactionId, SessionId, ToolCallId, TurnId
from openwork_core.storage.codec import is_storable_text

_S = TypeVar("_S", bound=str)

UNKNOWN_ID = "unknown_id"
INT64_MAX = 2**63 - 1
MAX_ID_CHARS = 256
MAX_NAME_CHARS = 200
_ID = re.compile(r"[\x21-\x7e]{1,256}")  # printable ASCII, no space: every id we or a provider mint


def _checked_id(value: _S) -> _S:
    if not is_storable_text(value):
        raise unstorable("an id")
    if _ID.fullmatch(value) is None:
        raise PydanticCustomError(UNKNOWN_ID, "no such id: {value!r}", {"value": value[:80]})
    return value


def _storable_str(value: str) -> str:
    if not is_storable_text(value):
        raise unstorable("a path or query parameter")
    return value


def _not_blank(value: _S) -> _S:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


SessionIdPath = Annotated[SessionId, AfterValidator(_checked_id)]
"""A path id: unstorable → 400, not an id we could have minted → 404 (never reaches SQL)."""
TurnIdPath = Annotated[TurnId, AfterValidator(_checked_id)]
ToolCallIdPath = Annotated[ToolCallId, AfterValidator(_checked_id)]
CompactionIdQuery = Annotated[CompactionId, AfterValidator(_checked_id)]
StorableStr = Annotated[str, AfterValidator(_storable_str)]
Cursor = Annotated[int, Query(ge=0, le=INT64_MAX)]
"""A non-negative sequence cursor that fits PostgreSQL's BIGINT."""

Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS), AfterValidator(_not_blank)]
"""A provider, model or agent name, a client request id: non-blank, bounded."""

BaseUrl = Annotated[str, Field(min_length=1, max_length=2048), AfterValidator(_not_blank)]

BodyId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS), AfterValidator(_checked_id)]
CompactionIdBody = Annotated[
    CompactionId, Field(min_length=1, max_length=MAX_ID_CHARS), AfterValidator(_checked_id)
]
ClientRequestIdBody = Annotated[
    ClientRequestId, Field(min_length=1, max_length=MAX_NAME_CHARS), AfterValidator(_not_blank)
]

TokenCount = Annotated[int, Field(gt=0, le=2**31 - 1)]

_LAST_EVENT_ID = re.compile(r"[0-9]{1,19}")


def last_event_cursor(header: str | None) -> int | None:
    """``Last-Event-ID`` as a cursor; ``ValueError`` unless it is ASCII digits within int64
    (``"²".isdigit()`` is true, so ``str.isdigit`` is not the rule)."""
    if header is None or not header.strip():
        return None
    text = header.strip()
    if _LAST_EVENT_ID.fullmatch(text) is None or int(text) > INT64_MAX:
        raise ValueError("Last-Event-ID must be a decimal sequence number")
    return int(text)
