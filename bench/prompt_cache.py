"""Benchmark: the per-call cost of the usage record and prompt-cache diagnostics (issue 14
point 9) against the ``ContextEngine.prepare`` it follows.

Run: ``.venv/bin/python bench/prompt_cache.py``. Over the 2 000-item history of
``bench/prepare.py`` it times, for the second call of a turn (the previous call's fingerprint in
hand, the same System Context and tools) and for the first call of a turn (a new System Context
object: the stable prefix is hashed again), ``model_call_record`` ÷ one warm ``prepare`` of the
same request (goal ≤ 0.10 for the second call). Each record time is the mean of ``INNER`` calls;
times are the minimum over several repetitions; nothing here is asserted by the test suite.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench.prepare, run as a script

from bench.prepare import CAPS, ITEMS, REPEAT, SYSTEM, TOOLS, build_history, fresh_copy, timed
from openwork_chat_state.item import ConversationItem, RealOrigin
from openwork_chat_state.messages import Message, Role, TextBlock
from openwork_chat_state.view import ConversationContextView
from openwork_core.context.builder import ResolvedSystemContext, SystemContextBuilder
from openwork_core.context.engine import ContextEngine, PreparedModelCall
from openwork_core.session.runner.usage_step import SubmissionFacts, model_call_record
from openwork_core.usage import TokenUsage

FACTS = SubmissionFacts(model_call=2, submission=1, provider_id="bench", at=datetime.now(UTC))
INNER = 100
USAGE = TokenUsage(input_tokens=400_000, cached_input_tokens=390_000, output_tokens=900)


def main() -> None:
    engine = ContextEngine()
    items = build_history()
    watermark = ITEMS // 2

    def run(
        view: ConversationContextView, system: ResolvedSystemContext = SYSTEM
    ) -> PreparedModelCall:
        return engine.prepare(
            model="bench-model",
            capabilities=CAPS,
            system=system,
            view=view,
            tools=TOOLS,
            spill_dir="/home/user/.openwork/spill/session-1",
        )

    warms: list[float] = []
    seconds: list[float] = []
    firsts: list[float] = []
    for round_ in range(REPEAT):
        view = ConversationContextView(fresh_copy(items), watermark)
        before = run(view)
        _, previous = model_call_record(None, before, USAGE, FACTS)
        extra = ConversationItem(
            message=Message(role=Role.USER, content=(TextBlock(text="one more request"),)),
            origin=RealOrigin(message_id=f"msg-x{round_}", sequence=ITEMS + 1 + round_),
        )
        appended = ConversationContextView((*view.items, extra), watermark)
        prepared = run(appended)
        warms.append(timed(lambda appended=appended: run(appended)))
        seconds.append(
            timed(
                lambda prepared=prepared, previous=previous: [
                    model_call_record(previous, prepared, USAGE, FACTS) for _ in range(INNER)
                ]
            )
            / INNER
        )
        new_turn = SystemContextBuilder().build(
            "You are a careful coding agent. " * 50, "Plan rules. " * 20
        )
        first = run(appended, new_turn)
        firsts.append(
            timed(
                lambda first=first, previous=previous: [
                    model_call_record(previous, first, USAGE, FACTS) for _ in range(INNER)
                ]
            )
            / INNER
        )
    warm, second, first_call = min(warms), min(seconds), min(firsts)
    print(f"prepare, warm:                   {warm * 1e3:8.3f} ms")
    print(f"record, 2nd call of a turn:      {second * 1e3:8.3f} ms")
    print(f"record, 1st call of a turn:      {first_call * 1e3:8.3f} ms")
    print()
    print(f"record (2nd call) / prepare      = {second / warm:6.3f}   (goal <= 0.10)")
    print(f"record (1st call) / prepare      = {first_call / warm:6.3f}   (info)")


if __name__ == "__main__":
    main()
