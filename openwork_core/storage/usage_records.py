"""Per-submission usage and prompt-cache diagnostics as stored (issue 14 points 5 and 9;
migration 0008 ``model_call_usage``)."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from openwork_core.ids import MessageId, TurnId
from openwork_core.usage import TokenUsage


class CacheMissCause(enum.StrEnum):
    """Why the provider read far less from its prompt cache than the previous call left there."""

    STABLE_PREFIX_CHANGED = "stable_prefix_changed"
    """The system context, the provider or the model differ from the previous call."""
    TOOL_SURFACE_CHANGED = "tool_surface_changed"
    """Only the Tool Surface differs: an MCP server's tools changed (issue 27, migration 0012)."""
    PREFIX_CHANGED = "prefix_changed"
    """A Conversation item the previous call sent is different or gone (``item`` names the first;
    pruning, compaction and rewind do this)."""
    NO_CACHE_REPORTED = "no_cache_reported"
    """The provider reports no cached input at all (no caching, or not reported)."""
    IDLE_EXPIRED = "idle_expired"
    """Longer since the previous call than the provider keeps a cache entry."""
    UNEXPLAINED = "unexplained"


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheMiss:
    cause: CacheMissCause
    item: int | None = None
    """With ``prefix_changed``: the index of the first Conversation item that differs."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCallRecord:
    """One provider submission: what it reported, what we estimated, how it used the cache."""

    model_call: int
    submission: int
    provider_id: str
    model_name: str
    usage: TokenUsage
    estimated_input_tokens: int
    input_truncation_suspected: bool
    stable_prefix_hash: str
    request_bytes: int
    shared_prefix_bytes: int | None
    """Bytes of this request's copy that equal the session's previous call's (None: no previous
    call known to this process)."""
    cache_miss: CacheMiss | None
    idle_seconds: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredModelCall:
    turn_id: TurnId
    message_id: MessageId
    created_at: datetime
    call: ModelCallRecord


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionUsageTotals:
    """Every stored submission of a session, summed (provider-reported figures only)."""

    model_calls: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    input_truncation_suspected_calls: int = 0
    cache_misses: int = 0

    @property
    def cache_hit_ratio(self) -> float | None:
        """Cached input over input; None before any reported input."""
        if self.input_tokens <= 0:
            return None
        return round(self.cached_input_tokens / self.input_tokens, 4)


def _plus(total: int | None, more: int | None) -> int | None:
    """A reported figure adds to the total; an unreported one leaves it as it is."""
    if more is None:
        return total
    return (total or 0) + more


def add_usage(total: TokenUsage, more: TokenUsage) -> TokenUsage:
    """A turn's usage after one more submission (the same rule as the ``turns`` counters)."""
    return TokenUsage(
        input_tokens=_plus(total.input_tokens, more.input_tokens),
        output_tokens=_plus(total.output_tokens, more.output_tokens),
        cached_input_tokens=_plus(total.cached_input_tokens, more.cached_input_tokens),
        reasoning_tokens=_plus(total.reasoning_tokens, more.reasoning_tokens),
        cache_write_tokens=_plus(total.cache_write_tokens, more.cache_write_tokens),
    )


def usage_totals(calls: Iterable[ModelCallRecord]) -> SessionUsageTotals:
    """The session's figures over its submissions (cached input counts where input does)."""
    count = input_tokens = cached = written = output = reasoning = truncated = misses = 0
    for call in calls:
        usage = call.usage
        count += 1
        input_tokens += usage.input_tokens or 0
        if usage.input_tokens is not None:
            cached += usage.cached_input_tokens or 0
        written += usage.cache_write_tokens or 0
        output += usage.output_tokens or 0
        reasoning += usage.reasoning_tokens or 0
        truncated += call.input_truncation_suspected
        misses += call.cache_miss is not None
    return SessionUsageTotals(
        model_calls=count,
        input_tokens=input_tokens,
        cached_input_tokens=cached,
        cache_write_tokens=written,
        output_tokens=output,
        reasoning_tokens=reasoning,
        input_truncation_suspected_calls=truncated,
        cache_misses=misses,
    )
