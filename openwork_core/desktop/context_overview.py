"""The context page's overview of one inspection (issue 16 point 4; context-window.md §3, §7,
§8): the window as a stacked bar, the World State sections in the Conversation with the message
that carried each, and the largest items. Pure: derived from ``ContextInspection`` alone, with the
same byte metric as the budget (⌈compact JSON bytes / 4⌉)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

from openwork_chat_state.item import MessageKind
from openwork_core.context.provenance import RealProvenance, SyntheticProvenance
from openwork_core.context.wire import json_size, tokens_for_bytes
from openwork_core.context.world_state.sections import recognise_message
from openwork_core.desktop.titles import clip

if TYPE_CHECKING:
    from openwork_core.context.inspection import ContextInspection

LARGEST_ITEMS = 10
_PREVIEW_CHARS = 120


class Region(enum.StrEnum):
    SYSTEM = "system"
    CONVERSATION = "conversation"
    TOOLS = "tools"
    MCP_TOOLS = "mcp_tools"
    """The part of the Tool Surface that the user's MCP servers contributed (issue 27)."""
    FREE = "free"
    RESERVED = "reserved"


@dataclass(frozen=True, slots=True, kw_only=True)
class BarSegment:
    region: Region
    tokens: int


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowBar:
    """Segments in order, summing to ``context_window`` while the input fits the effective input
    (``reserved`` = the window minus the effective input: output and reasoning reserve).
    ``auto_compact_input_tokens``: the input size at which the next call compacts first, i.e.
    min(auto-compact line, effective input) − reserved output (compaction.md §1)."""

    context_window: int
    segments: tuple[BarSegment, ...]
    auto_compact_input_tokens: int
    auto_compact_percent: float


@dataclass(frozen=True, slots=True, kw_only=True)
class WorldStateEntry:
    """The latest World State message of a section in the Conversation."""

    section: str
    form: str
    tokens: int
    message_id: str | None
    sequence: int | None
    index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LargestItem:
    region: Region
    index: int
    tokens: int
    label: str
    message_id: str | None
    sequence: int | None
    preview: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextOverview:
    bar: WindowBar
    world_state: tuple[WorldStateEntry, ...]
    largest: tuple[LargestItem, ...]


def mcp_tool_tokens(inspection: ContextInspection) -> int:
    """The MCP tools' share of the Tool Surface's tokens (each definition and its comma)."""
    if inspection.mcp is None:
        return 0
    names = {t.tool_id for t in inspection.mcp.tools}
    share = sum(json_size(t) + 1 for t in inspection.tools if t.name in names)
    return min(inspection.budget.tool_surface_tokens, tokens_for_bytes(share))


def window_bar(inspection: ContextInspection) -> WindowBar:
    budget, limits = inspection.budget, inspection.limits
    reserved = limits.context_window - limits.effective_input_tokens
    free = max(0, limits.effective_input_tokens - budget.estimated_input_tokens)
    mcp = mcp_tool_tokens(inspection)
    return WindowBar(
        context_window=limits.context_window,
        segments=(
            BarSegment(region=Region.SYSTEM, tokens=budget.system_context_tokens),
            BarSegment(region=Region.CONVERSATION, tokens=budget.conversation_tokens),
            BarSegment(region=Region.TOOLS, tokens=budget.tool_surface_tokens - mcp),
            BarSegment(region=Region.MCP_TOOLS, tokens=mcp),
            BarSegment(region=Region.FREE, tokens=free),
            BarSegment(region=Region.RESERVED, tokens=reserved),
        ),
        auto_compact_input_tokens=max(
            0, limits.compaction_threshold - budget.reserved_output_tokens
        ),
        auto_compact_percent=inspection.auto_compact_percent,
    )


def _ids(index: int, inspection: ContextInspection) -> tuple[str | None, int | None, str]:
    entry = inspection.provenance[index]
    if isinstance(entry, RealProvenance):
        return entry.message_id, entry.sequence, entry.kind.value
    assert isinstance(entry, SyntheticProvenance)
    return entry.message_id, entry.sequence, f"synthetic:{entry.reason}"


def world_state_entries(inspection: ContextInspection) -> tuple[WorldStateEntry, ...]:
    """Per section, its latest ``world_state`` message in the request, in first-seen order."""
    latest: dict[str, WorldStateEntry] = {}
    for index, (message, entry) in enumerate(
        zip(inspection.conversation, inspection.provenance, strict=True)
    ):
        if not isinstance(entry, RealProvenance) or entry.kind is not MessageKind.WORLD_STATE:
            continue
        recognised = recognise_message(message.text)
        if recognised is None:
            continue
        section, form = recognised
        latest[section.value] = WorldStateEntry(
            section=section.value,
            form=form.value,
            tokens=tokens_for_bytes(json_size(message)),
            message_id=entry.message_id,
            sequence=entry.sequence,
            index=index,
        )
    return tuple(latest.values())


def largest_items(
    inspection: ContextInspection, count: int = LARGEST_ITEMS
) -> tuple[LargestItem, ...]:
    """The largest Conversation messages and tool definitions, largest first."""
    items: list[LargestItem] = []
    for index, message in enumerate(inspection.conversation):
        message_id, sequence, kind = _ids(index, inspection)
        text = " ".join(message.text.split()) or ", ".join(
            type(b).__name__ for b in message.content
        )
        items.append(
            LargestItem(
                region=Region.CONVERSATION,
                index=index,
                tokens=tokens_for_bytes(json_size(message)),
                label=f"{message.role.value} · {kind}",
                message_id=message_id,
                sequence=sequence,
                preview=clip(text, _PREVIEW_CHARS),
            )
        )
    for index, tool in enumerate(inspection.tools):
        items.append(
            LargestItem(
                region=Region.TOOLS,
                index=index,
                tokens=tokens_for_bytes(json_size(tool)),
                label=f"tool · {tool.name}",
                message_id=None,
                sequence=None,
                preview=clip(" ".join(tool.description.split()), _PREVIEW_CHARS),
            )
        )
    items.sort(key=lambda i: (-i.tokens, i.region.value, i.index))
    return tuple(items[:count])


def context_overview(inspection: ContextInspection) -> ContextOverview:
    return ContextOverview(
        bar=window_bar(inspection),
        world_state=world_state_entries(inspection),
        largest=largest_items(inspection),
    )
