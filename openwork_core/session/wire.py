"""The wire serializer of session updates and snapshots (session-runtime.md §7, §8; daemon-api.md
§2, §4): the one place where domain attribute names (snake_case) become the protocol's camelCase.

Every dataclass inside an envelope or a snapshot is written with its fields in declaration order
and each name through ``to_camel`` (``tool_call_id`` → ``toolCallId``); JSON values inside them
(tool inputs, artifacts, the approval card, plan steps) are written as they are."""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import TypeAlias

import orjson
from pydantic.alias_generators import to_camel

from openwork_core.session.snapshot import SessionSnapshot
from openwork_core.session.updates import SessionUpdateEnvelope

WireValue: TypeAlias = SessionUpdateEnvelope | SessionSnapshot


@cache
def _wire_names(cls: type) -> tuple[tuple[str, str], ...]:
    return tuple((f.name, to_camel(f.name)) for f in dataclasses.fields(cls))


def _camel_case(value: object) -> dict[str, object]:
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        raise TypeError(f"{type(value).__name__} is not a wire type")
    return {wire: getattr(value, name) for name, wire in _wire_names(type(value))}


def wire_json(value: WireValue) -> bytes:
    """The JSON bytes a client reads: an SSE ``data`` payload or the ``snapshot`` of a session."""
    return orjson.dumps(value, default=_camel_case, option=orjson.OPT_PASSTHROUGH_DATACLASS)
