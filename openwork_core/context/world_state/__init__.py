"""World State (context-window.md §3): capture the four sources, diff against the baseline.

``capture_world_state`` (I/O, off the event loop) → ``render_diff`` (pure, read-only) → the runner
persists each ``WorldStateUpdate`` as ``world_state_message_id(...)``, appends it to Chat State,
then advances the baseline with ``WorldStateBaseline.advanced``.
"""

from __future__ import annotations

from openwork_core.context.world_state.capture import (
    SectionBody,
    WorldStateCapture,
    WorldStateSources,
    capture_world_state,
    capture_world_state_sync,
)
from openwork_core.context.world_state.diff import (
    RetainedSections,
    WorldStateBaseline,
    WorldStateUpdate,
    render_diff,
)
from openwork_core.context.world_state.errors import (
    ProjectInstructionError,
    SkillCatalogTaskError,
    UserProjectContextError,
    WorldStateError,
)
from openwork_core.context.world_state.ids import (
    SECTION_ORDER,
    SectionId,
    world_state_message_id,
)

__all__ = [
    "SECTION_ORDER",
    "ProjectInstructionError",
    "RetainedSections",
    "SectionBody",
    "SectionId",
    "SkillCatalogTaskError",
    "UserProjectContextError",
    "WorldStateBaseline",
    "WorldStateCapture",
    "WorldStateError",
    "WorldStateSources",
    "WorldStateUpdate",
    "capture_world_state",
    "capture_world_state_sync",
    "render_diff",
    "world_state_message_id",
]
