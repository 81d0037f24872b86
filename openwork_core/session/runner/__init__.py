"""The turn runner, split by step."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openwork_core.session.runner.context import (
        ResolvedModel,
        SessionServices,
        TurnContext,
        TurnSpec,
    )
    from openwork_core.session.runner.permission import PermissionSlot
    from openwork_core.session.runner.turn import TurnRunner
    from openwork_core.session.runner.world_state_step import WorldStateTracker

_EXPORTS = {
    "PermissionSlot": "openwork_core.session.runner.permission",
    "ResolvedModel": "openwork_core.session.runner.context",
    "SessionServices": "openwork_core.session.runner.context",
    "TurnContext": "openwork_core.session.runner.context",
    "TurnRunner": "openwork_core.session.runner.turn",
    "TurnSpec": "openwork_core.session.runner.context",
    "WorldStateTracker": "openwork_core.session.runner.world_state_step",
}
"""Each public name's module: nothing is imported until a name is used."""

__all__ = [
    "PermissionSlot",
    "ResolvedModel",
    "SessionServices",
    "TurnContext",
    "TurnRunner",
    "TurnSpec",
    "WorldStateTracker",
]

if not TYPE_CHECKING:  # for mypy the names are the imports above: a misspelt one is an error

    def __getattr__(name: str) -> object:
        """A public name, imported from its module on first use (PEP 562) and kept."""
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
