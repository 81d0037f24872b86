"""Capture: read the four World State sources once and render each section's body (§3).

``capture_world_state_sync`` does all the blocking reads; ``capture_world_state`` runs it in one
``asyncio.to_thread`` call so the event loop never touches the file system. What is read, and no
more (DESIGN.md §6): the canonical working directory's ancestors up to the first ``.git``, one
listing of the repository root, one ``AGENTS.md`` (at most 64 KiB + 1 bytes), one listing of the
skill root and the ``SKILL.md`` of each of its direct children.
"""

from __future__ import annotations

import asyncio
import functools
import os
from dataclasses import dataclass, field
from pathlib import Path

from openwork_core.context.world_state._display import display_name
from openwork_core.context.world_state.errors import UserProjectContextError
from openwork_core.context.world_state.ids import SECTION_ORDER, SectionId
from openwork_core.context.world_state.project_instructions import load_project_instructions
from openwork_core.context.world_state.sandbox_policy import (
    bash_may_write_workspace,
    render_sandbox_policy,
)
from openwork_core.context.world_state.skill_catalog import load_skill_catalog
from openwork_core.context.world_state.user_project import load_user_project_context
from openwork_core.skills.discovery import SkillWarning
from openwork_tools.modes import SandboxMode, SandboxStatus


@dataclass(frozen=True, slots=True)
class WorldStateSources:
    """Everything a sampling reads. ``bash_can_write_workspace=None`` derives it from the mode, the
    sandbox verdict and the ``$HOME``-is-workspace rule (permissions-sandbox.md §1)."""

    working_directory: Path
    skill_root: Path | None
    disabled_skill_names: frozenset[str]
    sandbox_mode: SandboxMode
    sandbox: SandboxStatus
    bash_can_write_workspace: bool | None = None
    sandbox_network: bool = False
    """``OPENWORK_SANDBOX_NETWORK=on``: the policy's network line says bash has it."""


@dataclass(frozen=True, slots=True)
class SectionBody:
    section_id: SectionId
    body: str | None  # None = the section is absent


@dataclass(frozen=True, slots=True, kw_only=True)
class WorldStateCapture:
    """The rendered body of every section, in the fixed order. ``catalog_warnings`` were already
    logged; they never reach the model and play no part in comparisons."""

    sections: tuple[SectionBody, ...]
    catalog_warnings: tuple[SkillWarning, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        if tuple(s.section_id for s in self.sections) != SECTION_ORDER:
            raise ValueError("a World State capture holds the four sections in the fixed order")

    def body(self, section_id: SectionId) -> str | None:
        return self.sections[SECTION_ORDER.index(section_id)].body


def canonical_workspace(working_directory: Path) -> str:
    """The canonical working directory; it must exist and be a directory."""
    try:
        workspace = os.path.realpath(working_directory, strict=True)
    except OSError as exc:
        raise UserProjectContextError(
            f"the working directory {display_name(str(working_directory))} cannot be resolved: "
            f"{exc.strerror or exc}"
        ) from exc
    if not os.path.isdir(workspace):
        raise UserProjectContextError(
            f"the working directory {display_name(workspace)} is not a directory"
        )
    return workspace


def _home() -> str | None:
    home = os.environ.get("HOME")
    return _canonical_home(home) if home else None


@functools.lru_cache(maxsize=4)
def _canonical_home(home: str) -> str:
    """``$HOME`` resolved once per value for the life of the process, like the sandbox verdict."""
    return os.path.realpath(home)


def capture_world_state_sync(sources: WorldStateSources) -> WorldStateCapture:
    """Read the four sources and render them (blocking). Raises a ``WorldStateError``."""
    workspace = canonical_workspace(sources.working_directory)
    user_project = load_user_project_context(workspace)
    instructions = load_project_instructions(workspace)
    catalog = load_skill_catalog(sources.skill_root, sources.disabled_skill_names)
    bash_can_write = sources.bash_can_write_workspace
    if bash_can_write is None:
        bash_can_write = bash_may_write_workspace(
            sources.sandbox_mode, sources.sandbox, workspace, _home()
        )
    policy = render_sandbox_policy(
        sources.sandbox_mode,
        sources.sandbox,
        workspace,
        bash_can_write,
        network_on=sources.sandbox_network,
    )
    return WorldStateCapture(
        sections=(
            SectionBody(SectionId.USER_PROJECT_CONTEXT, user_project),
            SectionBody(SectionId.PROJECT_INSTRUCTIONS, instructions),
            SectionBody(SectionId.SKILL_CATALOG, catalog.body),
            SectionBody(SectionId.SANDBOX_POLICY, policy),
        ),
        catalog_warnings=catalog.warnings,
    )


async def capture_world_state(sources: WorldStateSources) -> WorldStateCapture:
    """``capture_world_state_sync`` in one worker thread, off the event loop."""
    return await asyncio.to_thread(capture_world_state_sync, sources)
