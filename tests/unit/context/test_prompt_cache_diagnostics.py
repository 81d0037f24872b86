"""Prompt-cache diagnostics and the silent-truncation check of one submission (issue 14 points 1,
5 and 9): pure functions of the previous and the current request copies and the usage."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson
from ctx_support import SYSTEM, TOOLS, History, prepare

from openwork_chat_state.messages import ToolDefinition
from openwork_core.context.builder import SystemContextBuilder
from openwork_core.session.prompt_cache import (
    MIN_CACHEABLE_TOKENS,
    fingerprint,
    shared_prefix,
    stable_prefix,
    truncation_suspected,
)
from openwork_core.session.runner.usage_step import SubmissionFacts, model_call_record
from openwork_core.storage.usage_records import CacheMiss, CacheMissCause
from openwork_core.usage import TokenUsage

T0 = datetime(2026, 1, 1, tzinfo=UTC)
BIG = "x" * (8 * MIN_CACHEABLE_TOKENS)
"""A result large enough (> 1,024 tokens at 4 bytes a token) for a cacheable prefix."""


def history() -> History:
    h = History()
    h.user("read the file")
    h.assistant("", ("a", "read"))
    h.result("a", BIG)
    return h


def facts(at: datetime = T0, provider: str = "p") -> SubmissionFacts:
    return SubmissionFacts(model_call=2, submission=1, provider_id=provider, at=at)


def test_the_request_bytes_are_the_measured_copy() -> None:
    """The fingerprint's sizes are the context engine's own measurements, not a re-encoding."""
    prepared = prepare(history().view())
    current = fingerprint("p", prepared, T0)
    conversation = len(orjson.dumps(prepared.conversation))
    assert current.request_bytes == current.stable_prefix_bytes + conversation
    assert sum(prepared.conversation_sizes) + len(prepared.conversation) + 1 == conversation


def test_an_appended_conversation_shares_the_whole_previous_request() -> None:
    h = history()
    before = fingerprint("p", prepare(h.view()), T0)
    h.assistant("done")
    after = fingerprint("p", prepare(h.view()), T0)
    shared = shared_prefix(before, after)
    assert shared.changed_item is None
    assert not shared.stable_prefix_changed
    assert shared.bytes == before.request_bytes - 1  # all but the previous closing bracket


def test_the_stable_prefix_hash_covers_provider_model_system_and_tools() -> None:
    prepared = prepare(history().view())
    base = stable_prefix("p", prepared)[0]
    assert stable_prefix("p", prepared)[0] == base
    assert stable_prefix("q", prepared)[0] != base
    other_system = prepare(history().view(), system=SystemContextBuilder().build("Other."))
    assert stable_prefix("p", other_system)[0] != base
    more_tools = prepare(history().view(), tools=(ToolDefinition(name="x", description="y"),))
    assert stable_prefix("p", more_tools)[0] != base


def record(
    before: History,
    after: History,
    usage: TokenUsage | None,
    *,
    gap: timedelta = timedelta(seconds=5),
    after_system: bool = False,
) -> CacheMiss | None:
    previous = fingerprint("p", prepare(before.view()), T0)
    current = prepare(
        after.view(),
        system=SystemContextBuilder().build("Changed.") if after_system else SYSTEM,
    )
    rec, _ = model_call_record(previous, current, usage, facts(T0 + gap))
    assert rec.stable_prefix_hash
    return rec.cache_miss


def grown() -> tuple[History, History]:
    before = history()
    after = history()
    after.assistant("done")
    return before, after


def test_a_cache_read_covering_the_previous_request_is_no_miss() -> None:
    before, after = grown()
    assert record(before, after, TokenUsage(input_tokens=2600, cached_input_tokens=2100)) is None


def test_a_changed_stable_prefix_is_the_cause() -> None:
    before, after = grown()
    miss = record(
        before, after, TokenUsage(input_tokens=2600, cached_input_tokens=0), after_system=True
    )
    assert miss == CacheMiss(cause=CacheMissCause.STABLE_PREFIX_CHANGED)


def test_a_conversation_changed_at_item_n_is_the_cause() -> None:
    """E.g. pruning or compaction rewrote the history: the first differing item is named."""
    before = history()
    after = History()
    after.user("read the file")
    after.assistant("", ("a", "read"))
    after.result("a", "pruned")
    miss = record(before, after, TokenUsage(input_tokens=60, cached_input_tokens=0))
    assert miss == CacheMiss(cause=CacheMissCause.PREFIX_CHANGED, item=2)


def test_a_provider_that_reports_no_cached_input_is_the_cause() -> None:
    before, after = grown()
    miss = record(before, after, TokenUsage(input_tokens=2600))
    assert miss == CacheMiss(cause=CacheMissCause.NO_CACHE_REPORTED)


def test_idle_longer_than_the_cache_lifetime_is_the_cause() -> None:
    before, after = grown()
    usage = TokenUsage(input_tokens=2600, cached_input_tokens=0)
    assert record(before, after, usage, gap=timedelta(minutes=10)) == CacheMiss(
        cause=CacheMissCause.IDLE_EXPIRED
    )
    assert record(before, after, usage) == CacheMiss(cause=CacheMissCause.UNEXPLAINED)


def test_a_previous_request_too_small_to_cache_is_no_miss() -> None:
    before = History()
    before.user("hi")
    after = History()
    after.user("hi")
    after.assistant("hello")
    assert record(before, after, TokenUsage(input_tokens=20, cached_input_tokens=0)) is None


def test_the_first_call_of_a_process_has_no_comparison() -> None:
    prepared = prepare(history().view())
    rec, current = model_call_record(None, prepared, TokenUsage(input_tokens=9), facts())
    assert (rec.shared_prefix_bytes, rec.cache_miss, rec.idle_seconds) == (None, None, None)
    assert rec.request_bytes == current.request_bytes
    assert rec.estimated_input_tokens == prepared.budget.estimated_input_tokens


def test_reported_input_far_below_the_estimate_is_suspected_truncation() -> None:
    """Issue 14 point 1 (Ollama truncates silently): below half of our estimate, for an
    estimate worth checking."""
    assert truncation_suspected(10_000, 2_048)
    assert not truncation_suspected(10_000, 6_000)
    assert not truncation_suspected(10_000, None)
    assert not truncation_suspected(400, 10)
    prepared = prepare(history().view())
    estimate = prepared.budget.estimated_input_tokens
    rec, _ = model_call_record(None, prepared, TokenUsage(input_tokens=estimate // 4), facts())
    assert rec.input_truncation_suspected


def test_the_calls_of_one_turn_reuse_the_stable_prefix_hash_and_it_stays_right() -> None:
    """Cheap per call: the same System Context and tool objects lend the previous hash, which
    equals the hash computed afresh; another model does not reuse it."""
    h = history()
    previous = fingerprint("p", prepare(h.view()), T0)
    h.assistant("done")
    prepared = prepare(h.view())
    reused = fingerprint("p", prepared, T0, previous)
    assert reused.stable_prefix_hash == stable_prefix("p", prepared)[0]
    assert reused.stable_prefix_bytes == stable_prefix("p", prepared)[1]
    other = fingerprint("q", prepared, T0, previous)
    assert other.stable_prefix_hash != previous.stable_prefix_hash


def test_a_changed_tool_surface_alone_is_the_cause_tool_surface_changed() -> None:
    """Issue 27 point 3: an MCP server's ``tools/list_changed``, applied at a turn boundary,
    changes only the tools: the miss names ``tool_surface_changed``, not the whole prefix."""
    before, after = grown()
    previous = fingerprint("p", prepare(before.view()), T0)
    more_tools = (
        *TOOLS,
        ToolDefinition(name="mcp__srv__new_tool", description="new", parameters={}),
    )
    current = prepare(after.view(), tools=more_tools)
    usage = TokenUsage(input_tokens=2600, cached_input_tokens=0)
    rec, _ = model_call_record(previous, current, usage, facts(T0))
    assert rec.cache_miss == CacheMiss(cause=CacheMissCause.TOOL_SURFACE_CHANGED)
    changed_system = prepare(
        after.view(), tools=more_tools, system=SystemContextBuilder().build("x")
    )
    rec, _ = model_call_record(previous, changed_system, usage, facts(T0))
    assert rec.cache_miss == CacheMiss(cause=CacheMissCause.STABLE_PREFIX_CHANGED)
