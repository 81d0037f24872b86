"""``openwork inspect``: the context-window inspection (daemon-api.md §3) as a bar of System /
Conversation / Tools / reserved output / free against the window with the auto-compact line, the
World State messages by section with their sizes, the largest items, and the provider's real
numbers of the last call next to the estimate (issue 14). Pure: JSON in, lines out."""

from __future__ import annotations

import math
from dataclasses import dataclass

import orjson
from pydantic import JsonValue

from openwork_core.cli.client import objects
from openwork_core.context.world_state.sections import recognise_message

BAR_WIDTH = 60
LARGEST = 5
PREVIEW_CHARS = 60


def tokens_of(value: JsonValue) -> int:
    """daemon-api.md §3's measure: ceil(len(compact UTF-8 JSON) / 4)."""
    return math.ceil(len(orjson.dumps(value)) / 4)


@dataclass(frozen=True, slots=True)
class Item:
    region: str
    label: str
    tokens: int


@dataclass(frozen=True, slots=True)
class Inspection:
    window: int
    system: int
    conversation: int
    tools: int
    reserved: int
    auto_compact_limit: int
    effective_input: int
    percent: float
    world_state: tuple[Item, ...]
    largest: tuple[Item, ...]
    usage: tuple[str, ...] = ()

    @property
    def free(self) -> int:
        return max(0, self.window - self.system - self.conversation - self.tools - self.reserved)


def _int(value: JsonValue) -> int:
    return int(value) if isinstance(value, int | float) else 0


def _text_of(item: JsonValue) -> str:
    if not isinstance(item, dict):
        return ""
    content = item.get("content")
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict):
            for key in ("text", "content", "output"):
                value = block.get(key)
                if isinstance(value, str):
                    parts.append(value)
                    break
            else:
                name = block.get("name")
                if isinstance(name, str):
                    parts.append(f"[{block.get('type', 'block')} {name}]")
    return " ".join(parts)


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"


def _figure(value: JsonValue) -> str:
    return str(value) if isinstance(value, int) else "?"


def usage_lines(usage: JsonValue) -> tuple[str, ...]:
    """The inspection's ``usage`` (docs/api.md) as lines; none before any recorded call."""
    if not isinstance(usage, dict):
        return ()
    lines: list[str] = []
    last = usage.get("last_call")
    call = last.get("call") if isinstance(last, dict) else None
    if isinstance(call, dict):
        reported = call.get("usage")
        reported = reported if isinstance(reported, dict) else {}
        lines.append(
            f"  last call: {_figure(reported.get('input_tokens'))} input tokens reported"
            f" (cached {_figure(reported.get('cached_input_tokens'))},"
            f" written {_figure(reported.get('cache_write_tokens'))}),"
            f" {_figure(call.get('estimated_input_tokens'))} estimated,"
            f" {_figure(reported.get('output_tokens'))} output"
        )
        if call.get("input_truncation_suspected") is True:
            lines.append("  warning: the provider saw far fewer tokens than sent (truncated?)")
        miss = call.get("cache_miss")
        if isinstance(miss, dict):
            item = miss.get("item")
            at = f" at item {item}" if isinstance(item, int) else ""
            lines.append(f"  cache miss: {miss.get('cause')}{at}")
    session = usage.get("session")
    ratio = usage.get("cache_hit_ratio")
    if isinstance(session, dict) and isinstance(ratio, int | float):
        lines.append(
            f"  session: {_figure(session.get('model_calls'))} calls,"
            f" cache hit ratio {ratio * 100:.1f}%"
        )
    return tuple(lines)


def read_inspection(body: JsonValue) -> Inspection:
    assert isinstance(body, dict)
    budget = body.get("budget")
    limits = body.get("limits")
    budget = budget if isinstance(budget, dict) else {}
    limits = limits if isinstance(limits, dict) else {}
    conversation = body.get("conversation")
    provenance = body.get("provenance")
    items = conversation if isinstance(conversation, list) else []
    origins = provenance if isinstance(provenance, list) else []
    world: list[Item] = []
    candidates: list[Item] = []
    for index, item in enumerate(items):
        origin = origins[index] if index < len(origins) else {}
        origin = origin if isinstance(origin, dict) else {}
        size = tokens_of(item)
        text = _text_of(item)
        role = str(item.get("role", "?")) if isinstance(item, dict) else "?"
        where = (
            f"#{origin['sequence']}" if "sequence" in origin else str(origin.get("synthetic", ""))
        )
        if origin.get("kind") == "world_state":
            recognised = recognise_message(text)
            section = recognised[0].value if recognised else "unknown"
            form = recognised[1].value if recognised else "?"
            world.append(Item("world_state", f"{section} ({form}, {where})", size))
        candidates.append(Item("conversation", f"{role} {where}: {_preview(text)}", size))
    for part in objects(body, "system"):
        candidates.append(Item("system", str(part.get("key", "?")), tokens_of(part)))
    for tool in objects(body, "tools"):
        candidates.append(Item("tools", f"tool {tool.get('name', '?')}", tokens_of(tool)))
    largest = sorted(candidates, key=lambda i: i.tokens, reverse=True)[:LARGEST]
    percent = body.get("auto_compact_percent")
    return Inspection(
        window=_int(limits.get("context_window")),
        system=_int(budget.get("system_context_tokens")),
        conversation=_int(budget.get("conversation_tokens")),
        tools=_int(budget.get("tool_surface_tokens")),
        reserved=_int(budget.get("reserved_output_tokens")),
        auto_compact_limit=_int(limits.get("auto_compact_token_limit")),
        effective_input=_int(limits.get("effective_input_tokens")),
        percent=float(percent) if isinstance(percent, int | float) else 0.0,
        world_state=tuple(world),
        largest=tuple(largest),
        usage=usage_lines(body.get("usage")),
    )


_SEGMENTS = (("S", "system"), ("C", "conversation"), ("T", "tools"), ("R", "reserved"))


def bar(view: Inspection, width: int = BAR_WIDTH) -> tuple[str, str]:
    """The bar (``S`` System, ``C`` Conversation, ``T`` Tools, ``R`` reserved output, ``.`` free)
    and, under it, the auto-compact line (``|`` at the compaction threshold)."""
    window = max(1, view.window)
    cells: list[str] = []
    for letter, field in _SEGMENTS:
        tokens = int(getattr(view, field))
        count = round(width * tokens / window)
        if tokens and count == 0:
            count = 1
        cells.extend(letter * count)
    cells = cells[:width] + ["."] * max(0, width - len(cells))
    threshold = min(view.auto_compact_limit or window, view.effective_input or window)
    position = min(width - 1, round(width * threshold / window))
    marker = [" "] * width
    marker[position] = "|"
    return "[" + "".join(cells) + "]", " " + "".join(marker).rstrip()


def inspection_lines(session_id: str, view: Inspection) -> list[str]:
    used = view.system + view.conversation + view.tools
    top, marker = bar(view)
    lines = [
        f"session {session_id}: {used} input tokens + {view.reserved} reserved output "
        f"of a {view.window}-token window",
        top,
        marker
        + f" auto-compact at {min(view.auto_compact_limit or view.window, view.effective_input or view.window)}"
        f" ({view.percent:.1f}% of it used)",
        f"  S System        {view.system:>9}",
        f"  C Conversation  {view.conversation:>9}",
        f"  T Tools         {view.tools:>9}",
        f"  R reserved      {view.reserved:>9}",
        f"  . free          {view.free:>9}",
        "World State:",
    ]
    if view.world_state:
        lines.extend(f"  {item.tokens:>7}  {item.label}" for item in view.world_state)
    else:
        lines.append("  (none yet: it is captured at the first turn)")
    lines.append("Largest items:")
    lines.extend(f"  {item.tokens:>7}  {item.region:<12} {item.label}" for item in view.largest)
    if view.usage:
        lines.append("Provider-reported usage:")
        lines.extend(view.usage)
    return lines
