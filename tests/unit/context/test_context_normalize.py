"""Normalization of the request copy: pairing and data blocks (context-window.md §4.2)."""

from __future__ import annotations

import orjson
import pytest
from ctx_support import NO_DATA_CAPS, History, fresh, image, prepare

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import (
    Message,
    Role,
    TextBlock,
    ToolResultBlock,
    ToolResultState,
)
from openwork_core.context.errors import DataBlockInUserInput
from openwork_core.context.normalize import INTERRUPTED_RESULT_TEXT
from openwork_core.context.provenance import RealProvenance, SyntheticProvenance


def _ids(messages: tuple[Message, ...]) -> list[str]:
    return [b.id for m in messages for b in m.tool_results]


def test_a_missing_tool_result_is_synthesized_in_call_order_with_the_original_call_id() -> None:
    """§4.2, §11 item 25: an `interrupted` result with the fixed body, in call order."""
    h = History()
    h.user("do three things")
    h.assistant("", ("a", "read"), ("b", "bash"), ("c", "grep"))
    h.result("a", "A")
    h.result("c", "C")
    h.user("next")
    prepared = prepare(h.view())
    conversation = prepared.conversation
    assert _ids(conversation) == ["a", "b", "c"]
    synthesized = conversation[3]
    assert synthesized == Message(
        role=Role.TOOL,
        content=(
            ToolResultBlock(
                id="b",
                name="bash",
                output=(TextBlock(text=INTERRUPTED_RESULT_TEXT),),
                state=ToolResultState.INTERRUPTED,
            ),
        ),
    )
    assert INTERRUPTED_RESULT_TEXT == (
        "Tool result unavailable: the previous turn ended before a durable result was recorded."
    )
    assert prepared.provenance[3] == SyntheticProvenance(reason="interrupted_tool_result")
    assert prepared.projection.synthesized_results == 1
    assert conversation[5].text == "next"


def test_synthesizing_the_same_history_twice_produces_identical_bytes() -> None:
    """§4.2, §11 item 25: for the same history the added bytes are the same every time."""
    h = History()
    h.user("go")
    h.assistant("", ("x1", "read"), ("x2", "read"))
    view = h.view()
    first = orjson.dumps(prepare(view).request)
    again = orjson.dumps(prepare(view).request)
    cold = orjson.dumps(prepare(fresh(view)).request)
    assert first == again == cold
    assert first.count(INTERRUPTED_RESULT_TEXT.encode()) == 2


def test_results_arrive_in_call_order_even_when_stored_in_completion_order() -> None:
    """§4.2: results are arranged in the order of the Tool Calls."""
    h = History()
    h.user("go")
    h.assistant("", ("a", "read"), ("b", "read"))
    h.result("b", "B")
    h.result("a", "A")
    prepared = prepare(h.view())
    assert _ids(prepared.conversation) == ["a", "b"]
    assert [p.sequence for p in prepared.provenance if isinstance(p, RealProvenance)] == [
        1,
        2,
        4,
        3,
    ]


def test_a_misplaced_result_after_a_user_message_is_dropped_and_the_call_synthesized() -> None:
    """§4.2: a result must immediately follow its Assistant message; misplaced ones are removed."""
    h = History()
    h.user("go")
    h.assistant("", ("a", "read"))
    h.user("interjection", MessageKind.WORLD_STATE)
    h.result("a", "late")
    prepared = prepare(h.view())
    roles = [m.role for m in prepared.conversation]
    assert roles == [Role.USER, Role.ASSISTANT, Role.TOOL, Role.USER]
    assert prepared.conversation[2].tool_results[0].state is ToolResultState.INTERRUPTED
    assert prepared.projection.dropped_results == 1
    assert prepared.projection.synthesized_results == 1


def test_duplicated_and_orphan_results_are_dropped_and_counted() -> None:
    """§4.2: duplicated results and results whose call cannot be found are removed."""
    h = History()
    h.user("go")
    h.assistant("", ("a", "read"))
    h.result("a", "first")
    h.result("a", "second")
    h.result("ghost", "orphan")
    h.assistant("done")
    h.result("a", "third")
    prepared = prepare(h.view())
    assert _ids(prepared.conversation) == ["a"]
    assert prepared.conversation[2].tool_results[0].output == (TextBlock(text="first"),)
    assert prepared.projection.dropped_results == 3
    assert prepared.projection.synthesized_results == 0


def test_a_result_before_any_assistant_message_is_an_orphan() -> None:
    """§4.2: a result whose Tool Call cannot be found is removed from the copy."""
    h = History()
    h.result("nobody", "x")
    h.user("hello")
    prepared = prepare(h.view())
    assert [m.role for m in prepared.conversation] == [Role.USER]
    assert prepared.provenance == (
        RealProvenance(message_id="m2", sequence=2, kind=MessageKind.NORMAL),
    )


def test_data_blocks_in_real_user_input_fail_when_the_model_accepts_none() -> None:
    """§4.2: if real user input contains a data block, the request fails."""
    h = History()
    h.add(Message(role=Role.USER, content=(TextBlock(text="see"), image())))
    with pytest.raises(DataBlockInUserInput) as raised:
        prepare(h.view(), capabilities=NO_DATA_CAPS)
    assert raised.value.code == "data_block_in_user_input"
    assert prepare(h.view()).conversation[0].content[1] == image()


@pytest.mark.parametrize(
    "kind", [MessageKind.SKILL_INSTRUCTION, MessageKind.AGENT_MESSAGE, MessageKind.WORLD_STATE]
)
def test_data_blocks_in_contextual_messages_are_removed_when_the_model_accepts_none(
    kind: MessageKind,
) -> None:
    """§4.2: data blocks in Skill bodies and Agent Messages (and World State) are removed."""
    h = History()
    h.add(Message(role=Role.USER, content=(TextBlock(text="ctx"), image(), image("Zg=="))), kind)
    h.user("request")
    prepared = prepare(h.view(), capabilities=NO_DATA_CAPS)
    assert prepared.conversation[0] == Message(role=Role.USER, content=(TextBlock(text="ctx"),))
    assert prepared.projection.dropped_data_blocks == 2


def test_data_blocks_in_tool_results_are_removed_when_the_model_accepts_none() -> None:
    """§4.2: data blocks in Tool Results are removed."""
    h = History()
    h.user("go")
    h.assistant("", ("a", "screenshot"))
    h.result("a", "caption", image())
    prepared = prepare(h.view(), capabilities=NO_DATA_CAPS)
    assert prepared.conversation[2].tool_results[0].output == (TextBlock(text="caption"),)
    assert prepared.projection.dropped_data_blocks == 1


def test_data_blocks_of_dropped_results_are_not_counted() -> None:
    """§4.2: the counters describe the request copy actually submitted."""
    h = History()
    h.user("go")
    h.result("ghost", "x", image())
    prepared = prepare(h.view(), capabilities=NO_DATA_CAPS)
    assert prepared.projection.dropped_results == 1
    assert prepared.projection.dropped_data_blocks == 0
