"""A tool never kills its session (issue 22 point 7): whatever a tool's own code raises — in
``prepare`` (the write path's ``realpath`` meeting a swapped symlink) or in ``execute`` — is that
call's error result the model sees, and the turn and the actor go on."""

from __future__ import annotations

import asyncio
from pathlib import Path

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import (
    Role,
    TextBlock,
    ToolResultBlock,
    ToolResultState,
    user_text,
)
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.session.input import PreparedTurnInput, input_message
from openwork_core.session.outcome import Completed
from openwork_core.session.runner.context import TurnSpec
from openwork_core.session.updates import TurnFinished
from openwork_core.storage.codec import decode_message
from openwork_tools.builtin.bash import BashTool
from openwork_tools.builtin.edit import EditTool
from openwork_tools.builtin.glob_files import GlobTool
from openwork_tools.builtin.grep import GrepTool
from openwork_tools.builtin.list_dir import ListTool
from openwork_tools.builtin.read import ReadInput, ReadTool
from openwork_tools.builtin.write import WriteInput, WriteTool
from openwork_tools.context import ToolCallContext, ToolSessionContext
from openwork_tools.prepared import PreparedCall
from openwork_tools.registry import ToolRegistry
from openwork_tools.results import ToolResult
from tests.support.memory_session import MemorySession, memory_session

RACE = OSError(22, "Invalid argument")


class RacedWrite(WriteTool):
    """``write`` whose pre-execution facts meet a symlink swapped under ``realpath``."""

    def inspect(self, session: ToolSessionContext, tool_input: WriteInput) -> PreparedCall:
        raise RACE


class BrokenRead(ReadTool):
    async def execute(
        self, session: ToolSessionContext, call: ToolCallContext, tool_input: ReadInput
    ) -> ToolResult:
        raise RuntimeError("boom")


def _registry() -> ToolRegistry:
    tools = [BrokenRead(), RacedWrite(), EditTool(), GrepTool(), GlobTool(), ListTool(), BashTool()]
    return ToolRegistry(tools)


def _spec(session: MemorySession, turn_id: str, text: str) -> TurnSpec:
    return TurnSpec(
        session_id=session.storage.session_id,
        turn_id=turn_id,
        client_request_id=f"req-{turn_id}",
        input=PreparedTurnInput(messages=(input_message(user_text(text), MessageKind.NORMAL),)),
        model=session.model,
    )


async def _run(session: MemorySession, spec: TurnSpec) -> TurnFinished:
    _, subscription = await session.handle.subscribe(None)
    try:
        await session.handle.start_turn(spec)
        async with asyncio.timeout(20):
            while True:
                envelope = await subscription.queue.get()
                if envelope.turn_id == spec.turn_id and isinstance(envelope.update, TurnFinished):
                    return envelope.update
    finally:
        subscription.close()


def _results(session: MemorySession) -> list[ToolResultBlock]:
    return [
        block
        for stored in session.storage.messages
        if stored.role is Role.TOOL
        for block in decode_message(stored).content
        if isinstance(block, ToolResultBlock)
    ]


async def test_an_exception_raised_by_a_tool_is_its_calls_error_result_and_the_turn_goes_on(
    tmp_path: Path,
) -> None:
    """Issue 22 point 7: an ``OSError`` from ``write``'s ``prepare`` and a ``RuntimeError`` from
    ``read``'s ``execute`` each become that call's error result (the model gets both in its next
    request), the turn completes, and the actor runs the next turn."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=(
                    ("call-1", "write", {"path": "a.txt", "content": "x"}),
                    ("call-2", "read", {"path": "a.txt"}),
                )
            ),
            ScriptedResponse(text="Both failed."),
            ScriptedResponse(text="Still here."),
        ]
    )
    async with memory_session(model, workspace, _registry()) as session:
        first = await _run(session, _spec(session, "turn-1", "write then read"))
        assert first.outcome == Completed("Both failed.")
        results = _results(session)
        assert [(r.id, r.state) for r in results] == [
            ("call-1", ToolResultState.ERROR),
            ("call-2", ToolResultState.ERROR),
        ]
        texts = ["".join(b.text for b in r.output if isinstance(b, TextBlock)) for r in results]
        assert texts == [
            "write failed: OSError: [Errno 22] Invalid argument",
            "read failed: RuntimeError: boom",
        ]
        sent = model.requests[1].messages
        sent_results = [b for m in sent for b in m.content if isinstance(b, ToolResultBlock)]
        assert sent_results == results
        second = await _run(session, _spec(session, "turn-2", "are you there?"))
        assert second.outcome == Completed("Still here.")
        assert (await session.handle.status()).active_turn_id is None
    assert not (workspace / "a.txt").exists()
