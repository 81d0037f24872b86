"""The turn runner, split by step."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openwork_core.lazy_exports import lazy_getattr

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
    __getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
