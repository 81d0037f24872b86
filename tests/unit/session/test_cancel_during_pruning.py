"""Cancel wins during a pruning pass (issue 24 point 3; compaction.md §2, session-runtime.md §3):
a cancel asked for while the threshold's pruning pass runs ends the turn ``cancelled`` right
after the pass, before any request reaches the model. On the in-memory storage port."""

from __future__ import annotations

import asyncio
import dataclasses
import math
from pathlib import Path

import pytest

from openwork_core.ids import SessionId
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.models.capabilities import ModelCapabilities
from openwork_core.session.outcome import Cancelled, Completed
from openwork_core.session.updates import TurnFinished
from tests.support.memory_session import memory_session

BIG = "".join(f"line {i:05d} of a long file that the model read once\n" for i in range(600))


async def test_a_cancel_during_the_pruning_pass_ends_the_turn_before_any_model_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "big.txt").write_text(BIG)
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=(("call-1", "read", {"path": "big.txt"}),)),
            ScriptedResponse(text="It is long."),
            ScriptedResponse(text="never asked for"),
        ]
    )
    async with memory_session(model, workspace) as session:
        _, first = await session.run_turn("read big.txt")
        assert isinstance(first[-1].update, TurnFinished)
        assert first[-1].update.outcome == Completed("It is long.")
        # A window whose compaction line the next request reaches, with room to spare below it
        # once the read's result is pruned: the pass runs, and no summary is needed after it.
        inspection = await session.handle.inspect_context(session.model)
        estimate = inspection.budget.estimated_input_tokens
        output = 1_024
        window = math.ceil((estimate + 200) / 0.85) + output
        session.model = dataclasses.replace(
            session.model,
            capabilities=ModelCapabilities(context_window_tokens=window, max_output_tokens=output),
        )
        calls_before = len(model.requests)

        storage = session.storage.compactions
        advance = storage.advance_watermark
        passes: list[int] = []

        async def advance_and_cancel(session_id: SessionId, sequence: int) -> int:
            turn_id = await session.handle.active_turn_id()
            assert turn_id is not None
            await session.handle.cancel_turn(turn_id)  # acknowledged while the pass runs
            passes.append(sequence)
            return await advance(session_id, sequence)

        monkeypatch.setattr(storage, "advance_watermark", advance_and_cancel)
        async with asyncio.timeout(20):
            _, second = await session.run_turn("and now?")

    assert len(passes) == 1, "the threshold's pruning pass did not run"
    assert isinstance(second[-1].update, TurnFinished)
    assert second[-1].update.outcome == Cancelled()
    assert len(model.requests) == calls_before, "a request went out after the cancel"
