"""Pure parts of the session runtime: assistant message order, doom-loop counting, the update
ring buffer and snapshot folding (session-runtime.md §4, §6–§8)."""

from __future__ import annotations

from openwork_chat_state.messages import (
    ProviderOpaqueBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from openwork_core.models.port import ModelResponse
from openwork_core.session.outcome import Cancelled
from openwork_core.session.runner.model_step import assistant_message
from openwork_core.session.runner.tool_step import DoomLoopCounter, normalized_arguments
from openwork_core.session.snapshot import IdleRuntime, RunningRuntime, TerminalRuntime, fold
from openwork_core.session.updates import (
    RING_CAPACITY,
    DraftCleared,
    PhaseChanged,
    SessionPhase,
    TextDeltaUpdate,
    TurnFinished,
    TurnStarted,
    UpdateHub,
)


def test_the_assistant_message_orders_thinking_text_opaque_then_tool_calls() -> None:
    """§6: blocks in order thinking, text, provider-opaque, tool calls."""
    opaque = ProviderOpaqueBlock(driver="anthropic", kind="signature", payload={"s": "x"})
    call = ToolCallBlock(id="c", name="read", input="{}")
    message = assistant_message(
        ModelResponse(
            text="answer",
            reasoning_text="thinking",
            tool_calls=(call,),
            provider_opaque_blocks=(opaque,),
        )
    )
    assert message.content == (
        ThinkingBlock(thinking="thinking"),
        TextBlock(text="answer"),
        opaque,
        call,
    )


def test_doom_loop_counts_identical_normalized_calls_and_any_other_call_resets() -> None:
    """§4: same name and same normalized arguments, threshold 3; a different call resets."""
    counter = DoomLoopCounter(3)
    a = normalized_arguments('{"b": 1, "a": 2}')
    same = normalized_arguments('{"a":2,"b":1}')
    assert a == same
    assert a is not None
    assert [counter.observe("read", a), counter.observe("read", a)] == [False, False]
    assert counter.observe("list", a) is False
    assert [counter.observe("read", a), counter.observe("read", a)] == [False, False]
    assert counter.observe("read", a) is True
    assert normalized_arguments("[1]") is None
    assert normalized_arguments("not json") is None
    assert normalized_arguments("") == "{}"


def test_sequences_start_at_one_and_replay_returns_only_newer_updates() -> None:
    """§7: per-session sequence from 1; replay after a cursor has no gap and no duplicate."""
    hub = UpdateHub("s")
    for _ in range(5):
        hub.emit("t", DraftCleared())
    replay = hub.replay(2)
    assert [e.sequence for e in replay.items] == [3, 4, 5]
    assert replay.resync is False


def test_a_cursor_that_left_the_ring_buffer_or_is_ahead_asks_for_resync() -> None:
    """§7 and DESIGN.md §2: 512 entries; older or future cursors → resync first."""
    hub = UpdateHub("s")
    for _ in range(RING_CAPACITY + 10):
        hub.emit("t", DraftCleared())
    behind = hub.replay(5)
    assert behind.resync is True
    assert len(behind.items) == RING_CAPACITY
    assert hub.replay(10).resync is False
    assert hub.replay(hub.last_sequence + 3).resync is True


def test_a_slow_subscriber_is_marked_lagged_instead_of_blocking_the_session() -> None:
    hub = UpdateHub("s")
    subscription = hub.subscribe()
    for _ in range(RING_CAPACITY + 1):
        hub.emit("t", DraftCleared())
    assert subscription.lagged is True


def test_the_snapshot_folds_a_turn_from_start_to_terminal() -> None:
    """§8: idle → running with draft and phase → terminal with the outcome."""
    hub = UpdateHub("s")
    runtime = IdleRuntime()
    for update in (
        TurnStarted(client_request_id="r"),
        PhaseChanged(phase=SessionPhase.RUNNING_MODEL),
        TextDeltaUpdate(delta="Hel"),
        TextDeltaUpdate(delta="lo"),
    ):
        runtime = fold(runtime, hub.emit("t1", update))
    assert isinstance(runtime, RunningRuntime)
    assert (runtime.turn_id, runtime.phase, runtime.draft_text) == (
        "t1",
        SessionPhase.RUNNING_MODEL,
        "Hello",
    )
    runtime = fold(runtime, hub.emit("t1", DraftCleared()))
    assert isinstance(runtime, RunningRuntime)
    assert runtime.draft_text == ""
    runtime = fold(runtime, hub.emit("t1", TurnFinished(outcome=Cancelled())))
    assert runtime == TerminalRuntime(turn_id="t1", client_request_id="r", outcome=Cancelled())
