"""The context page's overview of one inspection (issue 16 point 4, issue 25 point 7;
context-window.md §3, §7, §8): the model it is prepared for, the window as a stacked bar, the
World State sections in the Conversation with the item that carried each, the largest items, each
region's items (System parts with their text, Conversation items, tool definitions, each with its
size), the provider's real usage with the cache-hit ratio, and what the inspection warns about.
Pure: derived from ``ContextInspection`` and the model's name alone, with the same byte metric as
the budget (⌈compact JSON bytes / 4⌉)."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from openwork_chat_state.item import MessageKind
from openwork_core.context.provenance import RealProvenance, SyntheticProvenance
from openwork_core.context.wire import json_size, tokens_for_bytes
from openwork_core.context.world_state.sections import recognise_message
from openwork_core.desktop.titles import clip
from openwork_core.models.warnings import ModelWarning, WarningCode

if TYPE_CHECKING:
    from openwork_core.context.inspection import ContextInspection, InspectionUsage

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
class SystemPart:
    key: str
    tokens: int
    content: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Regions:
    """Every item of each region, in request order (Conversation and Tools items have the shape
    of the largest items)."""

    system: tuple[SystemPart, ...]
    conversation: tuple[LargestItem, ...]
    tools: tuple[LargestItem, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelName:
    provider_id: str
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LastCallUsage:
    """The session's newest recorded submission: what the provider reported (None: nothing)
    next to our estimate."""

    model_name: str
    input_tokens: int | None
    cached_input_tokens: int | None
    output_tokens: int | None
    estimated_input_tokens: int


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageSummary:
    model_calls: int
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    cache_hit_ratio: float | None
    last_call: LastCallUsage | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextOverview:
    model: ModelName
    bar: WindowBar
    world_state: tuple[WorldStateEntry, ...]
    largest: tuple[LargestItem, ...]
    regions: Regions
    usage: UsageSummary | None
    warnings: tuple[ModelWarning, ...]


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


def conversation_items(inspection: ContextInspection) -> tuple[LargestItem, ...]:
    """Each Conversation item in request order: its role and kind, size and first words."""
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
    return tuple(items)


def tool_items(inspection: ContextInspection) -> tuple[LargestItem, ...]:
    """Each tool definition in request order with its size."""
    return tuple(
        LargestItem(
            region=Region.TOOLS,
            index=index,
            tokens=tokens_for_bytes(json_size(tool)),
            label=f"tool · {tool.name}",
            message_id=None,
            sequence=None,
            preview=clip(" ".join(tool.description.split()), _PREVIEW_CHARS),
        )
        for index, tool in enumerate(inspection.tools)
    )


def regions(inspection: ContextInspection) -> Regions:
    return Regions(
        system=tuple(
            SystemPart(key=p.key, tokens=tokens_for_bytes(json_size(p)), content=p.content)
            for p in inspection.system
        ),
        conversation=conversation_items(inspection),
        tools=tool_items(inspection),
    )


def largest_items(
    inspection: ContextInspection, count: int = LARGEST_ITEMS
) -> tuple[LargestItem, ...]:
    """The largest Conversation messages and tool definitions, largest first."""
    items = [*conversation_items(inspection), *tool_items(inspection)]
    items.sort(key=lambda i: (-i.tokens, i.region.value, i.index))
    return tuple(items[:count])


def usage_summary(usage: InspectionUsage | None) -> UsageSummary | None:
    if usage is None:
        return None
    last = usage.last_call
    totals = usage.session
    return UsageSummary(
        model_calls=totals.model_calls,
        input_tokens=totals.input_tokens,
        cached_input_tokens=totals.cached_input_tokens,
        output_tokens=totals.output_tokens,
        cache_hit_ratio=usage.cache_hit_ratio,
        last_call=None
        if last is None
        else LastCallUsage(
            model_name=last.call.model_name,
            input_tokens=last.call.usage.input_tokens,
            cached_input_tokens=last.call.usage.cached_input_tokens,
            output_tokens=last.call.usage.output_tokens,
            estimated_input_tokens=last.call.estimated_input_tokens,
        ),
    )


def warnings(usage: InspectionUsage | None) -> tuple[ModelWarning, ...]:
    """What the inspection's real numbers warn about (docs/api.md "Context inspection"): the
    last call's input was likely cut by the server, or its prompt cache missed."""
    last = usage.last_call if usage is not None else None
    if last is None:
        return ()
    found: list[ModelWarning] = []
    call = last.call
    if call.input_truncation_suspected:
        found.append(
            ModelWarning(
                code=WarningCode.INPUT_TRUNCATION_SUSPECTED,
                message=(
                    f"the provider reported {call.usage.input_tokens} input tokens for about "
                    f"{call.estimated_input_tokens} sent: the server may cut the prompt "
                    "(e.g. Ollama's num_ctx); give it a larger context"
                ),
            )
        )
    if call.cache_miss is not None:
        where = (
            f" at Conversation item {call.cache_miss.item}"
            if call.cache_miss.item is not None
            else ""
        )
        found.append(
            ModelWarning(
                code=WarningCode.CACHE_MISS,
                message=f"the last call missed the prompt cache ({call.cache_miss.cause}{where})",
            )
        )
    return tuple(found)


def context_overview(
    inspection: ContextInspection,
    *,
    provider_id: str,
    model_name: str,
    known: Sequence[ModelWarning] = (),
) -> ContextOverview:
    """``known``: what the server said of the model and what the latest turn was warned about
    (issue 24 point 4); then what the inspection's numbers say; each code once, first wins."""
    found: dict[WarningCode, ModelWarning] = {}
    for warning in (*known, *warnings(inspection.usage)):
        found.setdefault(warning.code, warning)
    return ContextOverview(
        model=ModelName(provider_id=provider_id, name=model_name),
        bar=window_bar(inspection),
        world_state=world_state_entries(inspection),
        largest=largest_items(inspection),
        regions=regions(inspection),
        usage=usage_summary(inspection.usage),
        warnings=tuple(found.values()),
    )
