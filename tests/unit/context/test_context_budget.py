"""Budget estimate and model limits (context-window.md §7.1, §7.2, §11 item 17)."""

from __future__ import annotations

import math

import orjson
import pytest
from ctx_support import SYSTEM, TOOLS, History, image, measured_budget, prepare

from openwork_chat_state.item import MessageKind
from openwork_core.context.budget import ContextBudgetEstimate
from openwork_core.context.limits import (
    SUMMARY_OUTPUT_TOKEN_CAP,
    ModelContextLimits,
    summary_output_tokens,
)
from openwork_core.models.capabilities import ModelCapabilities


def _metric(value: object) -> int:
    return math.ceil(len(orjson.dumps(value)) / 4)


def _rich_history() -> History:
    h = History()
    h.user('ünïcödé 😀 "quoted" <tags> \n newline', MessageKind.WORLD_STATE)
    h.user("go")
    h.assistant("", ("a", "read"), ("b", "read"))
    h.result("a", "x" * 9_000)
    h.result("b", "y" * 50_000, image())
    h.assistant("", ("c", "read"))
    h.user("next")
    return h


def test_the_estimate_equals_a_re_measurement_of_the_prepared_request() -> None:
    """§7.1, §11 item 17 (gap closed): each region re-measured from `prepared.request` gives the
    same figure as the cached-size estimate."""
    prepared = prepare(_rich_history().view(watermark=4))
    request = prepared.request
    system_count = len(SYSTEM.parts)
    conversation = request.messages[system_count:]
    assert conversation == prepared.conversation
    budget = prepared.budget
    assert budget.system_context_tokens == _metric(
        [{"key": p.key, "content": p.content} for p in SYSTEM.parts]
    )
    assert budget.conversation_tokens == _metric(list(conversation))
    assert budget.tool_surface_tokens == _metric(
        [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in request.tools
        ]
    )
    assert budget.estimated_input_tokens == (
        budget.system_context_tokens + budget.conversation_tokens + budget.tool_surface_tokens
    )
    assert budget.reserved_output_tokens == request.max_output_tokens
    assert budget == measured_budget(SYSTEM, conversation, request.tools, 32_000)


def test_measures_the_three_input_regions_without_mutating_them() -> None:
    """§7.1, §10 invariant 6: the estimate only measures; the request is the same without it."""
    view = _rich_history().view(watermark=4)
    prepared = prepare(view)
    again = prepare(view, tools=TOOLS)
    assert orjson.dumps(prepared.request) == orjson.dumps(again.request)
    no_tools = prepare(view, tools=())
    assert no_tools.budget.tool_surface_tokens == 1  # "[]"
    assert no_tools.request.messages == prepared.request.messages


def test_tool_result_artifacts_do_not_count_toward_the_conversation() -> None:
    """§7.1: artifacts are UI-only; a result's estimate is the bytes of its message alone."""
    h = History()
    h.user("go")
    h.assistant("", ("a", "edit"))
    item = h.result("a", "edited")
    prepared = prepare(h.view())
    assert b"artifact" not in orjson.dumps(prepared.request)
    assert prepared.budget.conversation_tokens == _metric([m.message for m in h.items])
    assert orjson.dumps(item.message).count(b"{") == 3  # message, result, text block only


def test_the_model_limits_follow_the_capabilities() -> None:
    """§7.2: window 200 000, output 32 000 → effective 168 000, auto line 142 800."""
    limits = ModelContextLimits.from_capabilities(
        ModelCapabilities(context_window_tokens=200_000, max_output_tokens=32_000)
    )
    assert limits == ModelContextLimits(
        context_window=200_000, effective_input_tokens=168_000, auto_compact_token_limit=142_800
    )
    with_reasoning = ModelContextLimits.from_capabilities(
        ModelCapabilities(
            context_window_tokens=128_001, max_output_tokens=8_000, max_reasoning_tokens=20_000
        )
    )
    assert with_reasoning.effective_input_tokens == 100_001
    assert with_reasoning.auto_compact_token_limit == 85_001  # ⌈85 000.85⌉


def _estimate(input_tokens: int, output_tokens: int) -> ContextBudgetEstimate:
    return ContextBudgetEstimate.from_regions(
        system_context_tokens=0,
        conversation_tokens=input_tokens,
        tool_surface_tokens=0,
        reserved_output_tokens=output_tokens,
    )


@pytest.mark.parametrize(("used", "compacts"), [(142_799, False), (142_800, True), (150_000, True)])
def test_compaction_triggers_at_the_line_inclusive(used: int, compacts: bool) -> None:
    """§7.2: input estimate + output reservation ≥ min(auto line, effective input)."""
    limits = ModelContextLimits(
        context_window=200_000, effective_input_tokens=168_000, auto_compact_token_limit=142_800
    )
    assert limits.should_compact(_estimate(used - 32_000, 32_000)) is compacts
    assert limits.auto_compact_percent(_estimate(71_400 - 32_000, 32_000)) == 50.0


def test_the_summary_output_is_capped_at_16384_tokens() -> None:
    """§7.2, compaction.md §3.1: min(16 384, the model's max output)."""
    assert SUMMARY_OUTPUT_TOKEN_CAP == 16_384
    big = ModelCapabilities(context_window_tokens=200_000, max_output_tokens=32_000)
    small = ModelCapabilities(context_window_tokens=32_000, max_output_tokens=4_096)
    assert summary_output_tokens(big) == 16_384
    assert summary_output_tokens(small) == 4_096
