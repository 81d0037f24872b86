"""The turn runner, split by step."""

from __future__ import annotations

from openwork_core.session.runner.context import (
    ResolvedModel,
    SessionServices,
    TurnContext,
    TurnSpec,
)
from openwork_core.session.runner.permission import PermissionSlot
from openwork_core.session.runner.turn import TurnRunner
from openwork_core.session.runner.world_state_step import WorldStateTracker

__all__ = [
    "PermissionSlot",
    "ResolvedModel",
    "SessionServices",
    "TurnContext",
    "TurnRunner",
    "TurnSpec",
    "WorldStateTracker",
]
