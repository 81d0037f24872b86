"""The turn runner, split by step."""

from openwork_core.session.runner.turn import (
    ResolvedModel,
    SessionServices,
    TurnRunner,
    TurnSpec,
    outcome_json,
)
from openwork_core.session.runner.world_state_step import WorldStateTracker

__all__ = [
    "ResolvedModel",
    "SessionServices",
    "TurnRunner",
    "TurnSpec",
    "WorldStateTracker",
    "outcome_json",
]
