"""A tool's progress as a session update (tools.md §4; desktop-protocol.md §3
`tool_call_progress`): the wire shape, and the forwarding channel drained before the result."""

from __future__ import annotations

import orjson

from openwork_core.ids import SessionId, ToolCallId, TurnId
from openwork_core.session.runner.tool_progress import (
    CHANNEL_CAPACITY,
    forwarded_progress,
    progress_update,
)
from openwork_core.session.updates import SessionUpdate, SessionUpdateEnvelope
from openwork_core.session.wire import wire_json
from openwork_tools.context import MessageProgress, StderrProgress, StdoutProgress


def _wire(update: SessionUpdate) -> object:
    envelope = SessionUpdateEnvelope(
        session_id=SessionId("s"), turn_id=TurnId("t"), sequence=1, occurred_at_ms=0, update=update
    )
    return orjson.loads(wire_json(envelope))["update"]


def test_the_wire_shape_is_kind_with_its_chunk_or_its_message() -> None:
    """The pinned bytes (tests/unit/session/test_wire_bytes.py) keep the other field as null."""
    call = ToolCallId("tc_1")
    assert _wire(progress_update(call, StdoutProgress("out"))) == {
        "type": "tool_call_progress",
        "toolCallId": "tc_1",
        "progress": {"kind": "stdout", "chunk": "out", "message": None},
    }
    assert _wire(progress_update(call, StderrProgress("err")))["progress"] == {  # type: ignore[index]
        "kind": "stderr",
        "chunk": "err",
        "message": None,
    }
    assert _wire(progress_update(call, MessageProgress("half way")))["progress"] == {  # type: ignore[index]
        "kind": "message",
        "chunk": None,
        "message": "half way",
    }


async def test_everything_sent_is_emitted_before_the_context_exits_and_a_full_channel_drops() -> (
    None
):
    emitted: list[SessionUpdate] = []
    async with forwarded_progress(ToolCallId("tc_2"), emitted.append) as sink:
        for index in range(CHANNEL_CAPACITY + 10):  # no await between: the channel fills up
            sink(StdoutProgress(f"{index}\n"))
    chunks = [u.progress.chunk for u in emitted]  # type: ignore[union-attr]
    assert chunks == [f"{i}\n" for i in range(CHANNEL_CAPACITY)]
