"""The wire serializer of session updates and snapshots (session-runtime.md §7, §8; daemon-api.md
§2, §4): the one place where domain attribute names (snake_case) become the protocol's camelCase.

Every dataclass inside an envelope or a snapshot is written with its fields in declaration order
and each name through ``to_camel`` (``tool_call_id`` → ``toolCallId``); a field marked
``OMIT_WHEN_NONE`` is left out when it is ``None``. JSON values inside them (tool inputs,
artifacts, plan steps) are written as they are."""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import TypeAlias

import orjson
from pydantic.alias_generators import to_camel

from openwork_core.session.snapshot import SessionSnapshot
from openwork_core.session.updates import BroadcastResync, SessionUpdateEnvelope
from openwork_core.session.wire_fields import OMIT_WHEN_NONE_KEY
from openwork_core.storage.codec import storable_text

WireValue: TypeAlias = SessionUpdateEnvelope | BroadcastResync | SessionSnapshot
_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_UTC_Z
"""Datetimes (none today: ``utc_timestamp`` writes the plan's) as RFC 3339 UTC with ``Z``."""


@cache
def _wire_names(cls: type) -> tuple[tuple[str, str, bool], ...]:
    """(attribute, wire name, omitted when None) of each field, in declaration order."""
    return tuple(
        (f.name, to_camel(f.name), bool(f.metadata.get(OMIT_WHEN_NONE_KEY)))
        for f in dataclasses.fields(cls)
    )


def _camel_case(value: object) -> dict[str, object]:
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        raise TypeError(f"{type(value).__name__} is not a wire type")
    out: dict[str, object] = {}
    for name, wire, omit_when_none in _wire_names(type(value)):
        item = getattr(value, name)
        if item is not None or not omit_when_none:
            out[wire] = item
    return out


def wire_json(value: WireValue) -> bytes:
    """The JSON bytes a client reads: an SSE ``data`` payload or the ``snapshot`` of a session.

    orjson writes UTF-8 only, so a lone surrogate (a model's ``\\ud83d``, a file name that is not
    UTF-8 in a live tool update) is written with the storage rule's escape instead of failing
    the stream (docs/reliability.md "NUL-safe storage")."""
    try:
        return orjson.dumps(value, default=_camel_case, option=_OPTIONS)
    except orjson.JSONEncodeError:
        return orjson.dumps(_escaped(value), option=orjson.OPT_UTC_Z)


def _escaped(value: object) -> object:
    if isinstance(value, str):
        return storable_text(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _escaped(v) for k, v in _camel_case(value).items()}
    if isinstance(value, list | tuple):
        return [_escaped(v) for v in value]
    if isinstance(value, dict):
        return {storable_text(str(k)): _escaped(v) for k, v in value.items()}
    return value
