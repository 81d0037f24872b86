"""The one token-usage record: what a provider reported for a model call, or summed over a
Turn's or a session's calls. ``None`` is "not reported" (a sum stays ``None`` until a call
reports the figure). The wire body of it is ``session.updates.UsageBody`` (0 where unreported)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenUsage:
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cached_input_tokens: int | None = None
    """Input read from the provider's prompt cache (a subset of ``input_tokens``)."""
    reasoning_tokens: int | None = None
    cache_write_tokens: int | None = None
    """Input written to the prompt cache (Anthropic ``cache_creation_input_tokens``; a subset of
    ``input_tokens``)."""
