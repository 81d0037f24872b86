"""Pure trigger decisions (compaction.md §1) and the loop breaker (issue 7 item 9).

- ``threshold_due``: input estimate + reserved output ≥ min(auto line, effective input), inclusive.
- ``overflow_due``: the provider's explicit ``context_overflow`` code, and no semantic output yet
  (delivery not_sent / possibly_sent / accepted_no_semantic_output); message text never counts.
- ``compaction_ineffective``: when each of the last two automatic compactions freed less than
  10 % of its Conversation estimate, compacting again will not help: the next Turn fails fast
  with ``compaction_error`` and ``INEFFECTIVE_COMPACTION_MESSAGE`` (beyond the original, whose
  failing automatic compaction is simply retried by the next Turn, §11).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openwork_core.context.budget import ContextBudgetEstimate
from openwork_core.context.limits import ModelContextLimits
from openwork_core.models.port import DeliveryState, ModelError, ModelErrorKind
from openwork_core.session.compaction.errors import CompactionIneffective

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


def overflow_due(error: ModelError) -> bool:
    return error.kind is ModelErrorKind.CONTEXT_OVERFLOW and error.delivery in _OVERFLOW_DELIVERIES


def compaction_ineffective(recent_automatic: Sequence[CompactionEffect]) -> bool:
    """``recent_automatic``: the session's automatic compactions, oldest first. True when there
    are at least two and each of the last two freed less than 10 %."""
    window = recent_automatic[-INEFFECTIVE_WINDOW:]
    return len(window) == INEFFECTIVE_WINDOW and not any(e.freed_enough for e in window)


def ineffective_compaction_error() -> CompactionIneffective:
    return CompactionIneffective(INEFFECTIVE_COMPACTION_MESSAGE)
