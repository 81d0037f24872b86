"""JSON bytes for the wire that never fail on text UTF-8 cannot carry (docs/reliability.md
"NUL-safe storage"): orjson refuses a lone surrogate (e.g. a model's ``\\ud83d`` or a file name
that is not UTF-8 in a live tool update); such strings are sent with the storage rule's escape."""

from __future__ import annotations

import dataclasses

import orjson

from openwork_core.storage.codec import storable_text


def wire_json(value: object) -> bytes:
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return orjson.dumps(_escaped(value))


def _escaped(value: object) -> object:
    if isinstance(value, str):
        return storable_text(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _escaped(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [_escaped(v) for v in value]
    if isinstance(value, dict):
        return {storable_text(str(k)): _escaped(v) for k, v in value.items()}
    return value
