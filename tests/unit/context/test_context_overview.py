"""The context page's overview (issue 16 point 4, issue 25 point 7, context-window.md §3, §7,
§8): pure, from the inspection and the model's name alone."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime

import orjson
from ctx_support import CAPS, History, prepare

from openwork_chat_state.item import MessageKind
from openwork_core.context.inspection import (
    ContextInspection,
    InspectionUsage,
    build_context_inspection,
)
from openwork_core.context.limits import ModelContextLimits
from openwork_core.desktop.context_overview import ContextOverview, Region, context_overview
from openwork_core.storage.usage_records import (
    CacheMiss,
    CacheMissCause,
    ModelCallRecord,
    SessionUsageTotals,
    StoredModelCall,
)
from openwork_core.usage import TokenUsage

POLICY_1 = "<sandbox_policy>\nmode: auto\n</sandbox_policy>"
POLICY_2 = "<sandbox_policy>\nmode: accept_edits and a longer body\n</sandbox_policy>"


def _metric(value: object) -> int:
    return math.ceil(len(orjson.dumps(value)) / 4)


def _overview(inspection: ContextInspection) -> ContextOverview:
    return context_overview(inspection, provider_id="local", model_name="qwen3")


def _inspection():  # type: ignore[no-untyped-def]
    h = History()
    h.user(POLICY_1, MessageKind.WORLD_STATE)
    h.user("<sandbox_policy> typed by the user, not World State")
    h.assistant("ok " * 400)
    h.user(POLICY_2, MessageKind.WORLD_STATE)
    h.user("The previous skill catalog no longer applies.", MessageKind.WORLD_STATE)
    return build_context_inspection(prepare(h.view()), ModelContextLimits.from_capabilities(CAPS))


def test_the_bar_is_the_budget_against_the_window_and_its_line_is_where_the_next_call_compacts() -> (
    None
):
    """§7: System / Conversation / Tools from the budget, free up to the effective input, the
    output and reasoning reserve after it: the segments add up to the window; the line sits at
    min(auto-compact line, effective input) − reserved output input tokens."""
    inspection = _inspection()
    bar = _overview(inspection).bar
    tokens = {s.region: s.tokens for s in bar.segments}
    budget = inspection.budget
    assert [s.region for s in bar.segments] == list(Region)
    assert tokens[Region.SYSTEM] == budget.system_context_tokens
    assert tokens[Region.CONVERSATION] == budget.conversation_tokens
    assert tokens[Region.TOOLS] == budget.tool_surface_tokens
    assert sum(tokens.values()) == bar.context_window == 200_000
    assert tokens[Region.RESERVED] == 200_000 - 168_000
    assert bar.auto_compact_input_tokens == 142_800 - budget.reserved_output_tokens
    assert bar.auto_compact_percent == inspection.auto_compact_percent


def test_world_state_lists_each_sections_latest_message_with_its_size_and_id() -> None:
    """§3: only ``world_state`` messages count; the latest message of a section is the one
    carrying it; its size is the message's own metric."""
    inspection = _inspection()
    entries = {e.section: e for e in _overview(inspection).world_state}
    assert set(entries) == {"runtime/sandbox-policy", "skills/catalog"}
    policy = entries["runtime/sandbox-policy"]
    assert (policy.form, policy.message_id, policy.sequence) == ("body", "m4", 4)
    assert policy.tokens == _metric(inspection.conversation[policy.index])
    assert inspection.conversation[policy.index].text == POLICY_2
    assert entries["skills/catalog"].form == "invalidation"


def test_the_largest_items_come_largest_first_across_messages_and_tools() -> None:
    inspection = _inspection()
    largest = _overview(inspection).largest
    sizes = [i.tokens for i in largest]
    assert sizes == sorted(sizes, reverse=True)
    top = largest[0]
    assert top.region is Region.CONVERSATION and top.message_id == "m3"
    assert top.tokens == _metric(inspection.conversation[top.index])
    assert top.preview.startswith("ok ok") and len(top.preview) <= 120


def test_each_region_opens_to_its_items_in_request_order_with_their_sizes() -> None:
    """Issue 25 point 7: System parts with their text, every Conversation item, every tool."""
    inspection = _inspection()
    overview = _overview(inspection)
    regions = overview.regions
    assert [(p.key, p.content) for p in regions.system] == [
        (p.key, p.content) for p in inspection.system
    ]
    assert [p.tokens for p in regions.system] == [_metric(p) for p in inspection.system]
    assert [i.index for i in regions.conversation] == list(range(len(inspection.conversation)))
    assert [i.tokens for i in regions.conversation] == [_metric(m) for m in inspection.conversation]
    assert regions.conversation[0].label == "user · world_state"
    assert [i.label for i in regions.tools] == [f"tool · {t.name}" for t in inspection.tools]
    assert [i.tokens for i in regions.tools] == [_metric(t) for t in inspection.tools]
    assert overview.model.name == "qwen3" and overview.model.provider_id == "local"


def _with_usage(call: ModelCallRecord, totals: SessionUsageTotals) -> ContextInspection:
    last = StoredModelCall(
        turn_id="t1",  # type: ignore[arg-type]
        message_id="m9",  # type: ignore[arg-type]
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        call=call,
    )
    return replace(_inspection(), usage=InspectionUsage.of(last, totals))


def _call(**changes: object) -> ModelCallRecord:
    base = ModelCallRecord(
        model_call=1,
        submission=1,
        provider_id="local",
        model_name="qwen3",
        usage=TokenUsage(input_tokens=1000, output_tokens=20, cached_input_tokens=800),
        estimated_input_tokens=1100,
        input_truncation_suspected=False,
        stable_prefix_hash="h",
        request_bytes=4000,
        shared_prefix_bytes=None,
        cache_miss=None,
        idle_seconds=None,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_usage_carries_the_session_totals_the_cache_hit_ratio_and_the_last_call() -> None:
    totals = SessionUsageTotals(model_calls=3, input_tokens=3000, cached_input_tokens=1500)
    overview = _overview(_with_usage(_call(), totals))
    usage = overview.usage
    assert usage is not None
    assert (usage.model_calls, usage.input_tokens, usage.cached_input_tokens) == (3, 3000, 1500)
    assert usage.cache_hit_ratio == 0.5
    assert usage.last_call is not None
    assert (usage.last_call.input_tokens, usage.last_call.estimated_input_tokens) == (1000, 1100)
    assert overview.warnings == ()
    assert _overview(_inspection()).usage is None  # the database was unreachable


def test_a_suspected_truncation_and_a_cache_miss_are_warnings() -> None:
    call = _call(
        usage=TokenUsage(input_tokens=300, output_tokens=5),
        input_truncation_suspected=True,
        cache_miss=CacheMiss(cause=CacheMissCause.PREFIX_CHANGED, item=0),
    )
    warnings = _overview(_with_usage(call, SessionUsageTotals())).warnings
    assert [w.code.value for w in warnings] == ["input_truncation_suspected", "cache_miss"]
    assert "reported 300 input tokens for about 1100 sent" in warnings[0].message
    assert warnings[1].message.endswith("(prefix_changed at Conversation item 0)")
