"""Chat State invariants (context-window.md §4.1): the single writer of the Conversation."""

from __future__ import annotations

import pytest

from openwork_chat_state.actor import ChatStateActor
from openwork_chat_state.errors import (
    ChatStateStopped,
    DuplicateToolCall,
    NoActiveDraft,
    PersistedSystemMessage,
    SystemMessageRejected,
    UnmatchedToolResult,
)
from openwork_chat_state.item import (
    ConversationItem,
    MessageKind,
    RealOrigin,
)
from openwork_chat_state.messages import (
    Message,
    Role,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
    user_text,
)
from openwork_chat_state.state import ConversationState

_sequence = iter(range(1, 10_000))


def _item(message: Message, kind: MessageKind = MessageKind.NORMAL) -> ConversationItem:
    n = next(_sequence)
    return ConversationItem(
        message=message, kind=kind, origin=RealOrigin(message_id=f"m{n}", sequence=n)
    )


def _calls(*ids: str) -> ConversationItem:
    return _item(
        Message(
            role=Role.ASSISTANT,
            content=tuple(ToolCallBlock(id=i, name="read", input="{}") for i in ids),
        )
    )


def _result(call_id: str) -> ConversationItem:
    block = ToolResultBlock(
        id=call_id, name="read", output=(TextBlock(text="ok"),), state=ToolResultState.SUCCESS
    )
    return _item(Message(role=Role.TOOL, content=(block,)))


def _system() -> ConversationItem:
    return _item(Message(role=Role.SYSTEM, content=(TextBlock(text="you are"),)))


def test_loading_a_system_message_fails_with_persisted_system_message() -> None:
    """§4.1 (the original never tested it): a System message at load is refused, nothing changes."""
    state = ConversationState()
    state.load([_item(user_text("kept"))], None)
    with pytest.raises(PersistedSystemMessage) as excinfo:
        state.load([_item(user_text("a")), _system()], 3)
    assert excinfo.value.code == "persisted_system_message"
    assert [i.message.text for i in state.context_view().items] == ["kept"]


def test_appending_a_system_message_is_refused() -> None:
    state = ConversationState()
    with pytest.raises(SystemMessageRejected):
        state.append(_system())
    assert state.context_view().items == ()


def test_a_tool_result_must_answer_an_open_tool_call() -> None:
    """§4.1: unknown or already answered → UnmatchedToolResult."""
    state = ConversationState()
    with pytest.raises(UnmatchedToolResult):
        state.append(_result("nope"))
    state.append(_calls("c1"))
    state.append(_result("c1"))
    with pytest.raises(UnmatchedToolResult):
        state.append(_result("c1"))


def test_the_same_tool_call_id_cannot_occur_twice() -> None:
    state = ConversationState()
    with pytest.raises(DuplicateToolCall):
        state.append(_calls("c1", "c1"))
    state.append(_calls("c1"))
    with pytest.raises(DuplicateToolCall):
        state.append(_calls("c1"))


def test_a_rejected_batch_appends_nothing() -> None:
    state = ConversationState()
    with pytest.raises(UnmatchedToolResult):
        state.append_all([_calls("c1"), _result("c2")])
    assert state.context_view().items == ()
    with pytest.raises(UnmatchedToolResult):
        state.append(_result("c1"))  # the rejected call was never opened
    state.append(_calls("c1"))  # nor recorded: not a duplicate


def test_the_context_view_has_no_draft_and_carries_the_watermark() -> None:
    """§4.1: context_view() = committed items + watermark, never the streaming draft."""
    state = ConversationState()
    state.load([_item(user_text("hi"))], 7)
    state.begin_draft()
    state.push_text_delta("partial")
    view = state.context_view()
    assert [i.message.text for i in view.items] == ["hi"]
    assert view.tool_result_pruned_through_sequence == 7
    assert state.draft is not None
    assert state.draft.text == "partial"
    answer = _item(Message(role=Role.ASSISTANT, content=(TextBlock(text="done"),)))
    state.commit_draft(answer)
    assert state.draft is None
    assert state.context_view().items[-1] is answer


def test_the_watermark_only_moves_forward_and_survives_replacing_items() -> None:
    """compaction.md §2: GREATEST semantics, kept across compaction."""
    state = ConversationState()
    state.advance_watermark(5)
    state.advance_watermark(3)
    assert state.context_view().tool_result_pruned_through_sequence == 5
    state.replace_items([_item(user_text("summary"))])
    assert state.context_view().tool_result_pruned_through_sequence == 5


def test_deltas_without_a_draft_are_an_error() -> None:
    state = ConversationState()
    with pytest.raises(NoActiveDraft):
        state.push_text_delta("x")


async def test_the_actor_serializes_writes_and_answers_stopped_after_stop() -> None:
    """§4.1 + DESIGN.md §4.2: the handle's calls run on one loop; a stopped actor refuses."""
    handle = ChatStateActor.spawn()
    await handle.load([_item(user_text("a"))], None)
    await handle.append(_calls("c1"))
    with pytest.raises(UnmatchedToolResult):
        await handle.append(_result("zzz"))
    await handle.append(_result("c1"))
    view = await handle.context_view()
    assert len(view.items) == 3
    await handle.stop()
    with pytest.raises(ChatStateStopped):
        await handle.context_view()


def test_error_codes_are_unique() -> None:
    from openwork_chat_state import errors

    codes = [
        cls.code
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.ChatStateError)
    ]
    assert len(codes) == len(set(codes))
