"""Trigger decisions (compaction.md §1) and the loop breaker (issue 7 item 9)."""

from __future__ import annotations

import pytest

from openwork_core.context.budget import ContextBudgetEstimate
from openwork_core.context.limits import ModelContextLimits
from openwork_core.models.capabilities import ModelCapabilities
from openwork_core.models.port import DeliveryState, ErrorPhase, ModelError, ModelErrorKind
from openwork_core.session.compaction.policy import (
    INEFFECTIVE_COMPACTION_MESSAGE,
    SUMMARY_FLOOR_TOKENS,
    CompactionEffect,
    ThresholdDecision,
    compaction_floor,
    compaction_ineffective,
    overflow_can_compact,
    overflow_due,
    threshold_decision,
    threshold_due,
)

LIMITS = ModelContextLimits.from_capabilities(
    ModelCapabilities(context_window_tokens=200_000, max_output_tokens=32_000)
)


def estimate(input_tokens: int, reserved: int = 32_000) -> ContextBudgetEstimate:
    return ContextBudgetEstimate.from_regions(
        system_context_tokens=0,
        conversation_tokens=input_tokens,
        tool_surface_tokens=0,
        reserved_output_tokens=reserved,
    )


def test_the_threshold_line_is_inclusive() -> None:
    """§1 / context-window.md §7.2: estimate + reserved output ≥ min(142 800, 168 000)."""
    assert LIMITS.compaction_threshold == 142_800
    assert threshold_due(estimate(142_800 - 32_000), LIMITS)
    assert not threshold_due(estimate(142_800 - 32_001), LIMITS)


@pytest.mark.parametrize(
    ("delivery", "due"),
    [
        (DeliveryState.NOT_SENT, True),
        (DeliveryState.POSSIBLY_SENT, True),
        (DeliveryState.ACCEPTED_NO_SEMANTIC_OUTPUT, True),
        (DeliveryState.SEMANTIC_OUTPUT_EMITTED, False),
    ],
)
def test_overflow_compaction_needs_the_explicit_code_and_no_semantic_output(
    delivery: DeliveryState, due: bool
) -> None:
    error = ModelError(
        ModelErrorKind.CONTEXT_OVERFLOW, "x", phase=ErrorPhase.RESPONSE_HEADERS, delivery=delivery
    )
    assert overflow_due(error) is due


def test_overflow_never_matches_message_text() -> None:
    error = ModelError(
        ModelErrorKind.INVALID_REQUEST,
        "maximum context length exceeded",
        phase=ErrorPhase.RESPONSE_HEADERS,
        delivery=DeliveryState.NOT_SENT,
    )
    assert not overflow_due(error)


def test_two_automatic_compactions_each_freeing_under_10_percent_trip_the_loop_breaker() -> None:
    weak = CompactionEffect(before_tokens=100_000, after_tokens=91_000)
    strong = CompactionEffect(before_tokens=100_000, after_tokens=90_000)
    assert compaction_ineffective([strong, weak, weak])
    assert not compaction_ineffective([weak, strong]), "only when both freed too little"
    assert not compaction_ineffective([weak]), "one weak compaction is not a loop"
    assert not compaction_ineffective([])
    assert strong.freed_enough and not weak.freed_enough, "exactly 10 % is enough"


def test_the_loop_breaker_message_tells_the_user_what_to_do() -> None:
    assert "new session" in INEFFECTIVE_COMPACTION_MESSAGE
    assert "/compact" in INEFFECTIVE_COMPACTION_MESSAGE


# -- issue 24 point 1: compaction only when it can help ----------------------------------------
SMALL = ModelContextLimits.from_capabilities(
    ModelCapabilities(context_window_tokens=8_192, max_output_tokens=1_024)
)
"""An 8 192-token window with the small-window reservation: the line is ⌈0.85 × 7 168⌉ = 6 093."""


def regions(
    system: int, conversation: int, tools: int, reserved: int = 1_024
) -> ContextBudgetEstimate:
    return ContextBudgetEstimate.from_regions(
        system_context_tokens=system,
        conversation_tokens=conversation,
        tool_surface_tokens=tools,
        reserved_output_tokens=reserved,
    )


def test_the_first_turn_on_an_8192_window_goes_out_without_compaction() -> None:
    """Issue 24 point 1 (docs/compaction.md "Compaction only when it can help"): System 506 +
    Tools 3 261 + a one-message Conversation + 1 024 reserved is under the 6 093 line."""
    assert SMALL.compaction_threshold == 6_093
    decision = threshold_decision(regions(506, 60, 3_261), SMALL, floor=60 + SUMMARY_FLOOR_TOKENS)
    assert decision is ThresholdDecision.SUBMIT


def test_a_conversation_with_history_over_the_line_compacts() -> None:
    """Issue 24 point 1: over the line, a Conversation larger than what a compaction keeps, and
    the smallest compacted request under the line: summarise."""
    floor = 100 + SUMMARY_FLOOR_TOKENS
    assert threshold_decision(regions(506, 2_000, 3_261), SMALL, floor) is ThresholdDecision.COMPACT


def test_a_conversation_that_is_only_what_a_compaction_keeps_is_sent_as_it_is() -> None:
    """Issue 24 point 1: the last user request alone over the line — nothing a summary can
    shrink, so no summary: the request goes out and the turn warns ``window_too_small``."""
    floor = 2_000 + SUMMARY_FLOOR_TOKENS
    decision = threshold_decision(regions(506, 2_000, 3_261), SMALL, floor)
    assert decision is ThresholdDecision.TOO_SMALL


def test_when_system_tools_and_reservation_are_over_the_line_the_aim_is_the_window() -> None:
    """Issue 24 point 1: System + Tools + the reservation (+ the floor) alone over the line (a
    4 096 window): a request that fits the window goes out with ``window_too_small``; one over
    the window compacts when the compacted request would fit the window, else goes out too."""
    tiny = ModelContextLimits.from_capabilities(
        ModelCapabilities(context_window_tokens=5_000, max_output_tokens=1_024)
    )
    floor = 50 + SUMMARY_FLOOR_TOKENS
    fits = regions(300, 300, 3_000)
    assert fits.estimated_input_tokens + fits.reserved_output_tokens <= 5_000
    assert threshold_decision(fits, tiny, floor) is ThresholdDecision.TOO_SMALL
    over = regions(300, 2_000, 3_000)
    assert threshold_decision(over, tiny, floor) is ThresholdDecision.COMPACT
    hopeless = regions(300, 2_000, 4_000)
    assert threshold_decision(hopeless, tiny, floor) is ThresholdDecision.TOO_SMALL


def test_an_overflow_compacts_only_a_conversation_larger_than_what_a_compaction_keeps() -> None:
    """Issue 24 point 1: otherwise the turn fails ``context_window_too_small`` at once."""
    assert overflow_can_compact(regions(506, 2_000, 3_261), floor=500)
    assert not overflow_can_compact(regions(506, 500, 3_261), floor=500)


def test_the_floor_counts_the_last_user_request_and_world_state_but_not_older_history() -> None:
    """Issue 24 point 1: a compaction keeps the last real user request (replayed) and World
    State (sampled again), and installs at least a minimal summary and reminder."""
    from openwork_chat_state.item import ConversationItem, MessageKind, RealOrigin
    from openwork_chat_state.messages import Message, Role, TextBlock, user_text
    from openwork_core.context.budget import ContextBudgetEstimate as Budget
    from openwork_core.context.engine import PreparedModelCall
    from openwork_core.context.wire import json_size

    def item(message: Message, kind: MessageKind, sequence: int) -> ConversationItem:
        origin = RealOrigin(message_id=f"m{sequence}", sequence=sequence)
        return ConversationItem(message=message, kind=kind, origin=origin)

    world = item(user_text("w" * 400), MessageKind.WORLD_STATE, 1)
    old = item(user_text("o" * 4_000), MessageKind.NORMAL, 2)
    answer = item(
        Message(role=Role.ASSISTANT, content=(TextBlock(text="a" * 4_000),)), MessageKind.NORMAL, 3
    )
    last = item(user_text("l" * 800), MessageKind.NORMAL, 4)
    items = (world, old, answer, last)
    prepared = PreparedModelCall(
        request=None,  # type: ignore[arg-type]  # the floor reads sources and sizes only
        budget=Budget.from_regions(
            system_context_tokens=0,
            conversation_tokens=0,
            tool_surface_tokens=0,
            reserved_output_tokens=0,
        ),
        projection=None,  # type: ignore[arg-type]
        sources=items,
        conversation=tuple(i.message for i in items),
        system=None,  # type: ignore[arg-type]
    )
    kept = json_size(world.message) + json_size(last.message)
    assert compaction_floor(prepared) == -(-kept // 4) + SUMMARY_FLOOR_TOKENS
