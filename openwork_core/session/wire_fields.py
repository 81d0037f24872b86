"""Field markers the wire serializer (``session/wire.py``) reads from dataclass metadata."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

OMIT_WHEN_NONE_KEY = "wire_omit_when_none"

OMIT_WHEN_NONE: Mapping[str, bool] = MappingProxyType({OMIT_WHEN_NONE_KEY: True})
"""``field(default=None, metadata=OMIT_WHEN_NONE)``: the key is left out of the JSON when the
value is ``None`` (the approval card's optional fields, permissions-sandbox.md §5)."""
