"""Benchmark: ContextEngine.prepare against the physical limit of serializing its own request.

Run: ``.venv/bin/python bench/prepare.py``. Builds a 2 000-item history (200 tool results of
30 KB among ordinary user / assistant / World State messages; the older half of the results sits
below the pruning watermark) and prints:

- warm prepare ÷ one ``orjson.dumps(prepared.request)``   (goal ≤ 2.0; the second prepare over
  the same items, every per-item form cached in ``item._memo``);
- cold prepare ÷ one ``orjson.dumps(prepared.request)``   (first prepare over fresh items; info);
- prepare after appending one item ÷ the cold prepare      (goal ≤ 0.25).

Times are the minimum over several repetitions; nothing here is asserted by the test suite.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable

import orjson

from openwork_chat_state.item import ConversationItem, MessageKind, RealOrigin
from openwork_chat_state.messages import (
    Message,
    Role,
    TextBlock,
    ToolCallBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolResultState,
)
from openwork_chat_state.view import ConversationContextView
from openwork_core.context.builder import SystemContextBuilder
from openwork_core.context.engine import ContextEngine, PreparedModelCall
from openwork_core.models.capabilities import ModelCapabilities

ITEMS = 2_000
TOOL_RESULT_BYTES = 30 * 1024
REPEAT = 7
CAPS = ModelCapabilities(context_window_tokens=1_000_000, max_output_tokens=32_000)
SYSTEM = SystemContextBuilder().build("You are a careful coding agent. " * 50, "Plan rules. " * 20)
TOOLS = tuple(
    ToolDefinition(
        name=f"tool_{i}",
        description="Does something useful. " * 10,
        parameters={"type": "object", "properties": {"path": {"type": "string"}}},
    )
    for i in range(12)
)


def _text(seed: int, size: int) -> str:
    """Text with quotes, newlines and non-ASCII characters whose JSON encoding is at most
    ``size`` bytes (within a few bytes)."""
    line = f'line {seed}: some source code with "quotes" and ünïcode — {seed * 7}\n'
    text = line * (size // len(line) + 1)
    while (excess := len(orjson.dumps(text)) - 2 - size) > 0:
        text = text[: len(text) - max(1, excess // 3)]
    return text


def build_history() -> list[ConversationItem]:
    items: list[ConversationItem] = []
    calls = 0

    def add(message: Message, kind: MessageKind = MessageKind.NORMAL) -> None:
        sequence = len(items) + 1
        origin = RealOrigin(message_id=f"msg-{sequence}", sequence=sequence)
        items.append(ConversationItem(message=message, kind=kind, origin=origin))

    while len(items) < ITEMS:
        cycle = len(items) // 10
        call_id = f"call_{calls}"
        calls += 1
        add(Message(role=Role.USER, content=(TextBlock(text=_text(cycle, 300)),)))
        add(
            Message(
                role=Role.ASSISTANT,
                content=(
                    TextBlock(text=_text(cycle + 1, 400)),
                    ToolCallBlock(id=call_id, name="read", input='{"path": "src/main.py"}'),
                ),
            )
        )
        result = ToolResultBlock(
            id=call_id,
            name="read",
            output=(TextBlock(text=_text(cycle + 2, TOOL_RESULT_BYTES)),),
            state=ToolResultState.SUCCESS,
        )
        add(Message(role=Role.TOOL, content=(result,)))
        add(Message(role=Role.ASSISTANT, content=(TextBlock(text=_text(cycle + 3, 600)),)))
        add(
            Message(role=Role.USER, content=(TextBlock(text=_text(cycle + 4, 500)),)),
            MessageKind.WORLD_STATE,
        )
        for j in range(5):
            role = Role.USER if j % 2 == 0 else Role.ASSISTANT
            add(Message(role=role, content=(TextBlock(text=_text(cycle + 5 + j, 250)),)))
    return items[:ITEMS]


def fresh_copy(items: list[ConversationItem]) -> tuple[ConversationItem, ...]:
    return tuple(ConversationItem(message=i.message, kind=i.kind, origin=i.origin) for i in items)


def timed(action: Callable[[], object]) -> float:
    gc.collect()
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    engine = ContextEngine()
    items = build_history()
    watermark = ITEMS // 2

    def run(view: ConversationContextView) -> PreparedModelCall:
        return engine.prepare(
            model="bench-model",
            capabilities=CAPS,
            system=SYSTEM,
            view=view,
            tools=TOOLS,
            spill_dir="/home/user/.openwork/spill/session-1",
        )

    history_bytes = sum(len(orjson.dumps(i.message)) for i in items)
    colds: list[float] = []
    warms: list[float] = []
    appends: list[float] = []
    dumps: list[float] = []
    request_bytes = 0
    for round_ in range(REPEAT):
        view = ConversationContextView(fresh_copy(items), watermark)
        colds.append(timed(lambda view=view: run(view)))
        warms.append(timed(lambda view=view: run(view)))
        extra_sequence = ITEMS + 1 + round_
        extra = ConversationItem(
            message=Message(role=Role.USER, content=(TextBlock(text="one more request"),)),
            origin=RealOrigin(message_id=f"msg-{extra_sequence}", sequence=extra_sequence),
        )
        appended = ConversationContextView((*view.items, extra), watermark)
        appends.append(timed(lambda appended=appended: run(appended)))
        prepared = run(view)
        request_bytes = len(orjson.dumps(prepared.request))
        dumps.append(timed(lambda prepared=prepared: orjson.dumps(prepared.request)))

    cold, warm, append, dump = min(colds), min(warms), min(appends), min(dumps)
    print(f"history: {len(items)} items, {history_bytes / 1e6:.2f} MB stored")
    print(f"request: {request_bytes / 1e6:.2f} MB after pruning {watermark}-sequence watermark")
    print(f"orjson.dumps(request):  {dump * 1e3:8.2f} ms  (the physical limit)")
    print(
        f"prepare, cold (first):  {cold * 1e3:8.2f} ms  median {statistics.median(colds) * 1e3:.2f}"
    )
    print(
        f"prepare, warm (second): {warm * 1e3:8.2f} ms  median {statistics.median(warms) * 1e3:.2f}"
    )
    print(
        f"prepare, +1 item:       {append * 1e3:8.2f} ms  median {statistics.median(appends) * 1e3:.2f}"
    )
    print()
    print(f"warm prepare / dumps(request)   = {warm / dump:5.2f}   (goal <= 2.00)")
    print(f"cold prepare / dumps(request)   = {cold / dump:5.2f}   (info)")
    print(f"prepare after append / cold     = {append / cold:5.2f}   (goal <= 0.25)")


if __name__ == "__main__":
    main()
