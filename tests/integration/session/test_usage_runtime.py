"""Usage through real turns in-process (issue 14 points 1, 5, 9): each submission is recorded
with its assistant message, the inspection shows the last call next to the estimate with its
cache diagnostics, and the session's totals count suspected silent truncation and cache misses."""

from __future__ import annotations

from pathlib import Path

from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.session.updates import TurnFinished, UsageBody
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.usage_records import CacheMiss, CacheMissCause
from openwork_core.usage import TokenUsage
from tests.support.runtime import runtime


async def test_the_inspection_shows_the_last_calls_real_numbers_and_the_session_totals(
    store: PostgresStore, tmp_path: Path
) -> None:
    model = ScriptedModel(
        [
            ScriptedResponse(text="one", usage=TokenUsage(input_tokens=12, output_tokens=3)),
            ScriptedResponse(text="two", usage=TokenUsage(input_tokens=9000, output_tokens=4)),
        ]
    )
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        before = await rt.core.inspect_context_window(sid)
        assert before.usage is not None and before.usage.last_call is None
        estimate = before.budget.estimated_input_tokens
        assert estimate > 2 * 12, "the fresh session's request is worth the truncation check"
        _, updates = await rt.run_turn(sid, "first request")
        finished = updates[-1].update
        assert isinstance(finished, TurnFinished)
        assert finished.usage == UsageBody(input_tokens=12, output_tokens=3)
        first = await rt.core.inspect_context_window(sid)
        assert first.usage is not None and first.usage.last_call is not None
        call = first.usage.last_call.call
        assert call.input_truncation_suspected  # 12 reported against a much larger estimate
        assert call.estimated_input_tokens >= estimate
        assert call.shared_prefix_bytes is None  # the session's first call
        await rt.run_turn(sid, "second request")
        second = await rt.core.inspect_context_window(sid)
    assert second.usage is not None and second.usage.last_call is not None
    call = second.usage.last_call.call
    assert not call.input_truncation_suspected
    assert call.shared_prefix_bytes is not None and call.shared_prefix_bytes > 0
    assert call.cache_miss == CacheMiss(cause=CacheMissCause.NO_CACHE_REPORTED)
    totals = second.usage.session
    assert (totals.model_calls, totals.input_tokens, totals.output_tokens) == (2, 9012, 7)
    assert (totals.input_truncation_suspected_calls, totals.cache_misses) == (1, 1)
    assert second.usage.cache_hit_ratio == 0.0
