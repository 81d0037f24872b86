"""Pure trigger decisions (compaction.md §1) and the loop breaker (issue 7 item 9).

- ``threshold_due``: input estimate + reserved output ≥ min(auto line, effective input), inclusive.
- ``threshold_decision`` / ``overflow_can_compact`` (issue 24 point 1, docs/compaction.md
  "Compaction only when it can help"): a summary is requested only when the Conversation holds
  more than a compaction keeps (``compaction_floor``) and the smallest compacted request gets
  under the aim — the line, or the window when System + Tools + the reservation + that floor
  are already over the line. Otherwise the request goes out as it is (``TOO_SMALL``: the turn
  carries ``window_too_small``), and a provider overflow fails ``context_window_too_small``.
- ``overflow_due``: the provider's explicit ``context_overflow`` code, and no semantic output yet
  (delivery not_sent / possibly_sent / accepted_no_semantic_output); message text never counts.
- ``compaction_ineffective``: when each of the last two automatic compactions freed less than
  10 % of its Conversation estimate, compacting again will not help: the next Turn fails fast
  with ``compaction_error`` and ``INEFFECTIVE_COMPACTION_MESSAGE`` (beyond the original, whose
  failing automatic compaction is simply retried by the next Turn, §11).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from openwork_chat_state.item import MessageKind
from openwork_core.context.budget import ContextBudgetEstimate
from openwork_core.context.engine import PreparedModelCall
from openwork_core.context.limits import ModelContextLimits
from openwork_core.context.wire import json_size, tokens_for_bytes
from openwork_core.models.port import DeliveryState, ModelError, ModelErrorKind
from openwork_core.session.compaction.compacted_view import (
    SUMMARY_PREFIX,
    SUMMARY_PREFIX_SEPARATOR,
    is_real_user_request,
)
from openwork_core.session.compaction.reminder import EMPTY_REMINDER
from openwork_core.session.compaction.summary import SUMMARY_MIN_CHARS

MIN_FREED_PERCENT = 10
INEFFECTIVE_WINDOW = 2
INEFFECTIVE_COMPACTION_MESSAGE = (
    "The last two automatic compactions each freed less than 10% of the conversation, so "
    "compacting again will not make room. Start a new session, or run /compact manually."
)
_OVERFLOW_DELIVERIES = frozenset(
    {
        DeliveryState.NOT_SENT,
        DeliveryState.POSSIBLY_SENT,
        DeliveryState.ACCEPTED_NO_SEMANTIC_OUTPUT,
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionEffect:
    """The Conversation estimates around one automatic compaction."""

    before_tokens: int
    after_tokens: int

    @property
    def freed_enough(self) -> bool:
        """Freed at least 10 % of ``before_tokens`` (integer arithmetic)."""
        freed = self.before_tokens - self.after_tokens
        return freed * 100 >= self.before_tokens * MIN_FREED_PERCENT


def threshold_due(estimate: ContextBudgetEstimate, limits: ModelContextLimits) -> bool:
    return limits.should_compact(estimate)


SUMMARY_FLOOR_TOKENS = tokens_for_bytes(
    len(SUMMARY_PREFIX.encode()) + len(SUMMARY_PREFIX_SEPARATOR) + SUMMARY_MIN_CHARS
) + tokens_for_bytes(len(EMPTY_REMINDER.encode()))
"""The smallest summary and reminder a compaction installs (a valid summary has at least
``SUMMARY_MIN_CHARS`` characters)."""


def compaction_floor(prepared: PreparedModelCall) -> int:
    """The Conversation tokens no compaction removes: the last real user request (replayed),
    the World State messages (sampled again after it) and the smallest summary and reminder."""
    sizes = prepared.conversation_sizes or tuple(json_size(m) for m in prepared.conversation)
    kept = 0
    last_user: int | None = None
    for index, item in enumerate(prepared.sources):
        if item is None:
            continue
        if item.kind is MessageKind.WORLD_STATE:
            kept += sizes[index]
        elif is_real_user_request(item):
            last_user = index
    if last_user is not None:
        kept += sizes[last_user]
    return tokens_for_bytes(kept) + SUMMARY_FLOOR_TOKENS


class ThresholdDecision(enum.StrEnum):
    SUBMIT = "submit"
    """Under the line: no compaction."""
    COMPACT = "compact"
    """Over the aim, and a compaction can bring the request under it."""
    TOO_SMALL = "too_small"
    """Over the line, and no compaction can help: submit as it is, warn ``window_too_small``."""


def threshold_decision(
    estimate: ContextBudgetEstimate, limits: ModelContextLimits, floor: int
) -> ThresholdDecision:
    """Before a submission (issue 24 point 1). ``floor``: ``compaction_floor`` of the request.

    The aim is the line when System + Tools + the reservation + the floor are under it, else
    the window (input + reservation ≤ window). A compaction is requested only when the
    Conversation is larger than the floor and the floor fits the aim."""
    used = estimate.estimated_input_tokens + estimate.reserved_output_tokens
    line = limits.compaction_threshold
    if used < line:
        return ThresholdDecision.SUBMIT
    fixed = estimate.system_context_tokens + estimate.tool_surface_tokens
    fixed += estimate.reserved_output_tokens
    line_reachable = fixed + floor < line
    window = limits.context_window
    if not line_reachable and used <= window:
        return ThresholdDecision.TOO_SMALL
    fits_the_aim = line_reachable or fixed + floor <= window
    if estimate.conversation_tokens > floor and fits_the_aim:
        return ThresholdDecision.COMPACT
    return ThresholdDecision.TOO_SMALL


def overflow_can_compact(estimate: ContextBudgetEstimate, floor: int) -> bool:
    """After the provider's explicit overflow: a summary can only help a Conversation larger
    than what a compaction keeps; otherwise the turn fails ``context_window_too_small``."""
    return estimate.conversation_tokens > floor


def overflow_due(error: ModelError) -> bool:
    return error.kind is ModelErrorKind.CONTEXT_OVERFLOW and error.delivery in _OVERFLOW_DELIVERIES


def compaction_ineffective(recent_automatic: Sequence[CompactionEffect]) -> bool:
    """``recent_automatic``: the session's automatic compactions, oldest first. True when there
    are at least two and each of the last two freed less than 10 %."""
    window = recent_automatic[-INEFFECTIVE_WINDOW:]
    return len(window) == INEFFECTIVE_WINDOW and not any(e.freed_enough for e in window)
