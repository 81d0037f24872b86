"""World State (context-window.md §3): capture the four sources, diff against the baseline.

``capture_world_state`` (I/O, off the event loop) → ``render_diff`` (pure, read-only) → the runner
persists each ``WorldStateUpdate`` as ``world_state_message_id(...)``, appends it to Chat State,
then advances the baseline with ``WorldStateBaseline.advanced``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openwork_core.lazy_exports import lazy_getattr

if TYPE_CHECKING:
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

_EXPORTS = {
    "ProjectInstructionError": "openwork_core.context.world_state.errors",
    "RetainedSections": "openwork_core.context.world_state.diff",
    "SECTION_ORDER": "openwork_core.context.world_state.ids",
    "SectionBody": "openwork_core.context.world_state.capture",
    "SectionId": "openwork_core.context.world_state.ids",
    "SkillCatalogTaskError": "openwork_core.context.world_state.errors",
    "UserProjectContextError": "openwork_core.context.world_state.errors",
    "WorldStateBaseline": "openwork_core.context.world_state.diff",
    "WorldStateCapture": "openwork_core.context.world_state.capture",
    "WorldStateError": "openwork_core.context.world_state.errors",
    "WorldStateSources": "openwork_core.context.world_state.capture",
    "WorldStateUpdate": "openwork_core.context.world_state.diff",
    "capture_world_state": "openwork_core.context.world_state.capture",
    "capture_world_state_sync": "openwork_core.context.world_state.capture",
    "render_diff": "openwork_core.context.world_state.diff",
    "world_state_message_id": "openwork_core.context.world_state.ids",
}
"""Each public name's module: nothing is imported until a name is used."""

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

if not TYPE_CHECKING:  # for mypy the names are the imports above: a misspelt one is an error
    __getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
