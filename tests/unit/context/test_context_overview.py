"""The context page's overview (issue 16 point 4, context-window.md §3, §7): pure, from the
inspection alone."""

from __future__ import annotations

import math

import orjson
from ctx_support import CAPS, History, prepare

from openwork_chat_state.item import MessageKind
from openwork_core.context import ModelContextLimits, build_context_inspection
from openwork_core.desktop.context_overview import Region, context_overview

POLICY_1 = "<sandbox_policy>\nmode: auto\n</sandbox_policy>"
POLICY_2 = "<sandbox_policy>\nmode: accept_edits and a longer body\n</sandbox_policy>"


def _metric(value: object) -> int:
    return math.ceil(len(orjson.dumps(value)) / 4)


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
    bar = context_overview(inspection).bar
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
    entries = {e.section: e for e in context_overview(inspection).world_state}
    assert set(entries) == {"runtime/sandbox-policy", "skills/catalog"}
    policy = entries["runtime/sandbox-policy"]
    assert (policy.form, policy.message_id, policy.sequence) == ("body", "m4", 4)
    assert policy.tokens == _metric(inspection.conversation[policy.index])
    assert inspection.conversation[policy.index].text == POLICY_2
    assert entries["skills/catalog"].form == "invalidation"


def test_the_largest_items_come_largest_first_across_messages_and_tools() -> None:
    inspection = _inspection()
    largest = context_overview(inspection).largest
    sizes = [i.tokens for i in largest]
    assert sizes == sorted(sizes, reverse=True)
    top = largest[0]
    assert top.region is Region.CONVERSATION and top.message_id == "m3"
    assert top.tokens == _metric(inspection.conversation[top.index])
    assert top.preview.startswith("ok ok") and len(top.preview) <= 120
