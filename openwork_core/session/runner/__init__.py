"""The turn runner, split by step."""

from openwork_core.session.runner.turn import (
    ResolvedModel,
    SessionServices,
    TurnRunner,
    TurnSpec,
    WorldStateSampler,
    outcome_json,
)

__all__ = [
    "ResolvedModel",
    "SessionServices",
    "TurnRunner",
    "TurnSpec",
    "WorldStateSampler",
    "outcome_json",
]
