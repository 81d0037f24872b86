"""Model limits derived from the capabilities (context-window.md §7.2, compaction.md §1).

- effective input = window − max output − max reasoning (0 when there is none);
- auto-compaction line = ⌈effective input × 85 %⌉ (integer arithmetic, no float rounding);
- compact when estimated input + reserved output ≥ min(auto line, effective input) (inclusive);
- a summary request asks for min(16 384, the model's max output) tokens (DESIGN.md §2).
"""

from __future__ import annotations

from dataclasses import dataclass

from openwork_core.context.budget import ContextBudgetEstimate
from openwork_core.models.capabilities import ModelCapabilities

AUTO_COMPACT_PERCENT = 85
SUMMARY_OUTPUT_TOKEN_CAP = 16_384


@dataclass(frozen=True, slots=True)
class ModelContextLimits:
    """Field order is the inspection's wire shape (daemon-api.md §3 ``limits``)."""

    context_window: int
    effective_input_tokens: int
    auto_compact_token_limit: int

    @classmethod
    def from_capabilities(cls, capabilities: ModelCapabilities) -> ModelContextLimits:
        effective = (
            capabilities.context_window_tokens
            - capabilities.max_output_tokens
            - (capabilities.max_reasoning_tokens or 0)
        )
        auto_line = -(-effective * AUTO_COMPACT_PERCENT // 100)
        return cls(
            context_window=capabilities.context_window_tokens,
            effective_input_tokens=effective,
            auto_compact_token_limit=auto_line,
        )

    @property
    def compaction_threshold(self) -> int:
        """min(auto-compaction line, effective input)."""
        return min(self.auto_compact_token_limit, self.effective_input_tokens)

    def should_compact(self, estimate: ContextBudgetEstimate) -> bool:
        """Input estimate + output reservation ≥ the threshold (inclusive)."""
        used = estimate.estimated_input_tokens + estimate.reserved_output_tokens
        return used >= self.compaction_threshold

    def auto_compact_percent(self, estimate: ContextBudgetEstimate) -> float:
        """100 × (input estimate + output reservation) ÷ threshold; at 100 the call compacts."""
        used = estimate.estimated_input_tokens + estimate.reserved_output_tokens
        return 100.0 * used / self.compaction_threshold


def summary_output_tokens(capabilities: ModelCapabilities) -> int:
    """The summary request's output cap: min(16 384, the model's max output)."""
    return min(SUMMARY_OUTPUT_TOKEN_CAP, capabilities.max_output_tokens)
