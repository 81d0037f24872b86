"""What the session registry is configured with — its load limits and the lookups it is given —
in a module of its own, so the daemon's start and the provider runtime name them without
importing the registry (and through it the whole session runtime: issue 13 §3)."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from openwork_core.storage.records import ProviderRecord

if TYPE_CHECKING:
    from openwork_core.models.port import ModelPort
    from openwork_core.models.served_window import ServedWindow

ModelPortFactory: TypeAlias = "Callable[[ProviderRecord, str | None], ModelPort]"
"""Builds the port for a provider, given the API key read from its environment variable."""

ProviderLookup: TypeAlias = Callable[[str], Awaitable[ProviderRecord]]
"""Reads one provider row; ``RecordNotFound`` when there is none."""

ApiKeyLookup: TypeAlias = Callable[[ProviderRecord], str | None]
"""The provider's key now: the runtime key file, else its environment variable."""

ServedWindowLookup: TypeAlias = "Callable[[str, str], ServedWindow | None]"
"""What a local server reported serving for (provider id, model name), if probed."""


def environment_key(provider: ProviderRecord) -> str | None:
    return os.environ.get(provider.api_key_env) if provider.api_key_env else None


def not_probed(_provider_id: str, _model: str) -> ServedWindow | None:
    return None


@dataclass(frozen=True, slots=True)
class LoadLimits:
    """``OPENWORK_SESSION_IDLE_SECONDS`` and ``OPENWORK_MAX_LOADED_SESSIONS`` (faults issue)."""

    idle_seconds: float = 600.0
    max_loaded: int = 256
    eviction_grace_seconds: float = 1.0
    """Beyond ``max_loaded``, a session used this recently stays (a caller holding the handle it
    just loaded is not cut off); the bound is met again at the next check."""
