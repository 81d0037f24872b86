"""The last real user request and the compacted view (compaction.md §5)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from openwork_chat_state.item import MessageKind, SyntheticOrigin, SyntheticReason
from openwork_chat_state.messages import Role, user_text
from openwork_chat_state.state import ConversationState
from openwork_core.session.compaction.compacted_view import (
    SUMMARY_PREFIX,
    build_compacted_items,
    last_real_user,
    replay_anchor,
)
from openwork_core.session.compaction.errors import MissingLastUser
from openwork_core.session.compaction.reminder import EMPTY_REMINDER
from openwork_core.storage.compaction_records import CompactionKind
from openwork_core.storage.postgres.compactions import CheckpointRecord
from tests.unit.compaction.compaction_support import assistant, real, synthetic, tool_result


def checkpoint(**overrides: object) -> CheckpointRecord:
    values: dict[str, object] = {
        "id": "cp-1",
        "session_id": "s1",
        "sequence": 1,
        "kind": CompactionKind.MANUAL,
        "through_message_sequence": 9,
        "replaced_through_message_sequence": 9,
        "source_message_count": 9,
        "checkpoint_format_version": 1,
        "summary_format_version": 1,
        "last_user_message_id": "m3",
        "last_user_message_sequence": 3,
        "resolved_model_name": "m",
        "summary": "<conversation_summary …>",
        "runtime_state": "{}",
        "runtime_reminder_format_version": 1,
        "runtime_reminder": EMPTY_REMINDER,
        "trigger_turn_id": None,
        "parent_compaction_id": None,
        "input_tokens": None,
        "output_tokens": None,
        "created_at": datetime(2026, 1, 1, tzinfo=UTC),
    }
    values.update(overrides)
    return CheckpointRecord(**values)  # type: ignore[arg-type]


def test_the_last_real_user_request_is_the_last_normal_user_message() -> None:
    items = [
        real(user_text("first"), 1),
        real(assistant("ok"), 2),
        real(user_text("second"), 3),
        real(assistant("", (("c1", "read"),)), 4),
        real(tool_result("c1", "body"), 5),
    ]
    assert last_real_user(items) is items[2]


@pytest.mark.parametrize(
    "kind", [MessageKind.WORLD_STATE, MessageKind.SKILL_INSTRUCTION, MessageKind.AGENT_MESSAGE]
)
def test_contextual_user_items_are_never_the_last_real_user_request(kind: MessageKind) -> None:
    """§5: a world state item (a gap in the original), a skill body or an agent message never
    qualifies, even as the very last item."""
    items = [real(user_text("the request"), 1), real(user_text("<context/>"), 2, kind)]
    assert last_real_user(items) is items[0]


def test_a_summary_or_a_reminder_is_never_the_last_real_user_request_but_a_replay_is() -> None:
    replay = synthetic(
        user_text("old request"),
        SyntheticReason.LAST_USER_REQUEST_REPLAY,
        source_id="m3",
        source_sequence=3,
    )
    items = [
        replay,
        synthetic(user_text("summary"), SyntheticReason.COMPACTION_SUMMARY),
        synthetic(user_text("reminder"), SyntheticReason.SYSTEM_REMINDER),
    ]
    assert last_real_user(items) is replay
    assert replay is not None
    anchor = replay_anchor(replay)
    assert (anchor.message_id, anchor.sequence) == ("m3", 3)
    assert last_real_user(items[1:]) is None


def test_no_user_request_at_all_finds_none() -> None:
    assert last_real_user([real(user_text("<w/>"), 1, MessageKind.WORLD_STATE)]) is None


def test_compacted_items_are_replay_summary_reminder_then_the_raw_tail() -> None:
    """§5: three synthetic User items, then the raw messages after the install boundary."""
    tail = (real(user_text("<w/>"), 10, MessageKind.WORLD_STATE), real(user_text("next"), 11))
    items = build_compacted_items(checkpoint(), user_text("second"), tail)
    assert [i.message.role for i in items[:3]] == [Role.USER] * 3
    replay, summary, reminder = items[:3]
    assert replay.message == user_text("second")
    assert replay.origin == SyntheticOrigin(
        compaction_id="cp-1",
        reason=SyntheticReason.LAST_USER_REQUEST_REPLAY,
        source_message_id="m3",
        source_sequence=3,
    ), "DESIGN.md §2: the replay keeps the original id and sequence"
    assert summary.message.text == SUMMARY_PREFIX + "\n\n<conversation_summary …>"
    assert reminder.message.text == EMPTY_REMINDER
    assert isinstance(reminder.origin, SyntheticOrigin)
    assert reminder.origin.reason is SyntheticReason.SYSTEM_REMINDER
    assert items[3:] == tail
    assert items[3].kind is MessageKind.WORLD_STATE, "raw items keep their MessageKind"


def test_the_summary_prefix_is_the_fixed_text_of_5() -> None:
    assert SUMMARY_PREFIX == (
        "The earlier Conversation was compacted into the following continuation summary. "
        "Treat it as prior conversation context, preserve its uncertainty, and continue from it:"
    )


def test_the_compacted_view_is_accepted_by_chat_state_and_holds_no_system_message() -> None:
    state = ConversationState()
    state.load(build_compacted_items(checkpoint(), user_text("second"), ()), None)
    assert all(i.message.role is not Role.SYSTEM for i in state.context_view().items)


def test_a_checkpoint_without_a_replay_anchor_cannot_be_projected() -> None:
    with pytest.raises(MissingLastUser):
        build_compacted_items(
            checkpoint(last_user_message_id=None, last_user_message_sequence=None),
            user_text("x"),
            (),
        )
