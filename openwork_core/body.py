"""The bases of every pydantic body the daemon reads or sends over HTTP (docs/api.md).

``RequestModel``: every request body (no unstorable string anywhere: docs/reliability.md "NUL-safe
storage"; built at start, as the routes validate with them). ``Body`` and ``RootBody``: what the
routes answer.

A response body is ``defer_build``: pydantic builds its validator and serializer when it is first
used, not when its module is imported, so the daemon starts without building the ~60 bodies its
routes answer; a request pays only for the one it answers, once (docs/performance.md "Start")."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, RootModel, model_validator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from openwork_core.storage.codec import is_storable_text

RootT = TypeVar("RootT")

UNSTORABLE_TEXT = "unstorable_text"


def unstorable(where: str) -> PydanticCustomError:
    return PydanticCustomError(
        UNSTORABLE_TEXT, "{where} holds U+0000 or a lone surrogate", {"where": where}
    )


def check_storable(value: object, where: str = "a string") -> None:
    """Raise ``unstorable_text`` when any string inside ``value`` (keys included) is unstorable."""
    if isinstance(value, str):
        if not is_storable_text(value):
            raise unstorable(where)
    elif isinstance(value, list | tuple):
        for item in value:
            check_storable(item, where)
    elif isinstance(value, dict):
        for key, item in value.items():
            check_storable(key, where)
            check_storable(item, where)


class RequestModel(BaseModel):
    """Base of every request body: no unstorable string anywhere, before any field is read."""

    @model_validator(mode="before")
    @classmethod
    def _storable(cls, data: Any) -> Any:
        check_storable(data, "a field")
        return data


class Body(BaseModel):
    model_config = ConfigDict(defer_build=True)


class RootBody(RootModel[RootT]):
    """A body that is one record of the domain (a snapshot, an update), as ``session/wire.py``
    writes it: camelCase."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, defer_build=True)
