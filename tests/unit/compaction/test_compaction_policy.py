"""Trigger decisions (compaction.md §1) and the loop breaker (issue 7 item 9)."""

from __future__ import annotations

import pytest

from openwork_core.context.budget import ContextBudgetEstimate
from openwork_core.context.limits import ModelContextLimits
from openwork_core.models.capabilities import ModelCapabilities
from openwork_core.models.port import DeliveryState, ErrorPhase, ModelError, ModelErrorKind
from openwork_core.session.compaction.errors import CompactionError, CompactionIneffective
from openwork_core.session.compaction.policy import (
    INEFFECTIVE_COMPACTION_MESSAGE,
    CompactionEffect,
    compaction_ineffective,
    ineffective_compaction_error,
    overflow_due,
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


def test_the_loop_breaker_fails_with_compaction_error_and_tells_the_user_what_to_do() -> None:
    error = ineffective_compaction_error()
    assert isinstance(error, CompactionIneffective) and isinstance(error, CompactionError)
    assert str(error) == INEFFECTIVE_COMPACTION_MESSAGE
    assert "new session" in INEFFECTIVE_COMPACTION_MESSAGE
    assert "/compact" in INEFFECTIVE_COMPACTION_MESSAGE
