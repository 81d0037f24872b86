"""A provider that silently truncated the prompt (issue 14 point 1): the turn completes, a
warning is logged and the model call's span counts it (``trace_spans.attributes``)."""

from __future__ import annotations

from pathlib import Path

from structlog.testing import capture_logs

from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.models.port import TokenUsage
from openwork_core.storage import PostgresStore
from tests.support.runtime import runtime


async def _truncation_spans(store: PostgresStore, sid: str) -> list[bool]:
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            """SELECT attributes ? 'silent_truncation' AS flagged FROM trace_spans
               WHERE session_id = $1 AND kind = 'model_call' ORDER BY started_at""",
            sid,
        )
    return [bool(r["flagged"]) for r in rows]


async def test_a_report_far_below_the_estimate_is_logged_and_counted_on_the_span(
    store: PostgresStore, tmp_path: Path
) -> None:
    model = ScriptedModel(
        [
            ScriptedResponse(text="cut", usage=TokenUsage(input_tokens=10, output_tokens=1)),
            ScriptedResponse(text="whole", usage=TokenUsage(input_tokens=None, output_tokens=1)),
        ]
    )
    with capture_logs() as logs:
        async with runtime(store, tmp_path, model) as rt:
            sid = await rt.new_session()
            estimate = (await rt.core.inspect_context_window(sid)).budget.estimated_input_tokens
            assert estimate > 2_100, "a fresh session's request is large enough to tell"
            await rt.run_turn(sid, "one")
            await rt.run_turn(sid, "two")
            await rt.core.trace.flushed()
            assert await _truncation_spans(store, sid) == [True, False]
    warnings = [e for e in logs if e["event"] == "model.silent_truncation"]
    assert [(w["reported_input_tokens"], w["count"]) for w in warnings] == [(10, 1)]
