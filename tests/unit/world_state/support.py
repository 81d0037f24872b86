"""Helpers: captures built from bodies, Conversation items from updates, one simulated runner step."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from openwork_chat_state.item import ConversationItem, MessageKind, RealOrigin
from openwork_chat_state.messages import user_text
from openwork_core.context.world_state.capture import (
    SectionBody,
    WorldStateCapture,
    WorldStateSources,
)
from openwork_core.context.world_state.diff import (
    RetainedSections,
    WorldStateBaseline,
    WorldStateUpdate,
    render_diff,
)
from openwork_core.context.world_state.ids import SECTION_ORDER, SectionId
from openwork_tools.modes import SandboxMode, SandboxStatus

PROJECT = (
    '<user_project_context format_version="1">\nworking_directory: /w\n</user_project_context>'
)
AGENTS = "<project_instructions>\nBe nice.\n</project_instructions>"
CATALOG = "<available_skills>\n- a: b (file: /s/a/SKILL.md)\n</available_skills>"
POLICY = "<sandbox_policy>\nmode: auto\n</sandbox_policy>"


def capture(
    project: str | None = PROJECT,
    agents: str | None = AGENTS,
    catalog: str | None = CATALOG,
    policy: str | None = POLICY,
) -> WorldStateCapture:
    bodies = (project, agents, catalog, policy)
    return WorldStateCapture(
        sections=tuple(SectionBody(s, b) for s, b in zip(SECTION_ORDER, bodies, strict=True))
    )


def items_of(updates: Sequence[WorldStateUpdate], start: int = 0) -> list[ConversationItem]:
    return [
        ConversationItem(
            message=user_text(u.text),
            kind=MessageKind.WORLD_STATE,
            origin=RealOrigin(message_id=f"m{start + i}", sequence=start + i),
        )
        for i, u in enumerate(updates)
    ]


def user_item(text: str, sequence: int = 1000) -> ConversationItem:
    return ConversationItem(
        message=user_text(text),
        origin=RealOrigin(message_id=f"u{sequence}", sequence=sequence),
    )


@dataclass
class Session:
    """A runner in miniature: Conversation items plus the in-memory baseline (§3 sampling flow)."""

    items: list[ConversationItem]
    baseline: WorldStateBaseline

    @classmethod
    def fresh(cls) -> Session:
        return cls([], WorldStateBaseline.empty())

    def sample(self, world: WorldStateCapture) -> tuple[WorldStateUpdate, ...]:
        updates = render_diff(self.baseline, world, RetainedSections.scan(self.items))
        self.items.extend(items_of(updates, start=len(self.items)))
        self.baseline = self.baseline.advanced(world)
        return updates

    def restarted(self) -> Session:
        return Session(list(self.items), WorldStateBaseline.empty())


def texts(updates: Sequence[WorldStateUpdate]) -> list[tuple[SectionId, str]]:
    return [(u.section_id, u.text) for u in updates]


def sources(
    working_directory: Path,
    skill_root: Path | None = None,
    *,
    disabled: frozenset[str] = frozenset(),
    mode: SandboxMode = SandboxMode.AUTO,
    sandbox: SandboxStatus = SandboxStatus(available=True),  # noqa: B008 - frozen value
    bash_can_write_workspace: bool | None = None,
) -> WorldStateSources:
    return WorldStateSources(
        working_directory=working_directory,
        skill_root=skill_root,
        disabled_skill_names=disabled,
        sandbox_mode=mode,
        sandbox=sandbox,
        bash_can_write_workspace=bash_can_write_workspace,
    )
