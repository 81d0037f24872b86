"""Checkpoint storage on real PostgreSQL: §6 checks, boundaries, §8.1 load, §8.4 transcript,
the watermark (compaction.md, storage.md §2)."""

from __future__ import annotations

import dataclasses

import pytest

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import user_text
from openwork_core.session.compaction.reminder import EMPTY_REMINDER
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.postgres.compactions import (
    CheckpointCheckFailed,
    CompactionKind,
    CompactionStore,
    NewCheckpoint,
    NoCheckpoint,
    TranscriptQueryInvalid,
)
from openwork_core.storage.postgres.store import PostgresStore
from tests.integration.compaction.pg_support import new_session, row, turn
from tests.support import store_rows
from tests.unit.compaction.compaction_support import assistant, valid_summary

RUNTIME_STATE = '{"schemaVersion":1,"editedPaths":[],"extensions":{},"warnings":[]}'


def checkpoint(
    cid: str = "cp-1", *, kind: CompactionKind = CompactionKind.MANUAL, **overrides: object
) -> NewCheckpoint:
    base = NewCheckpoint(
        id=cid,
        session_id="s1",
        kind=kind,
        source_message_count=3,
        last_user_message_id="t1-user",
        last_user_message_sequence=1,
        resolved_model_name="m",
        summary=valid_summary(),
        runtime_state=RUNTIME_STATE,
        runtime_reminder=EMPTY_REMINDER,
    )
    return dataclasses.replace(base, **overrides)  # type: ignore[arg-type]


async def _two_turns(store: PostgresStore) -> None:
    await new_session(store)
    await turn(
        store, "s1", "t1", [row("t1-user", user_text("first"))], [row("t1-a", assistant("one"))]
    )
    await turn(
        store, "s1", "t2", [row("t2-user", user_text("second"))], [row("t2-a", assistant("two"))]
    )


async def test_a_manual_checkpoint_sets_both_boundaries_to_the_current_max_sequence(
    store: PostgresStore,
) -> None:
    """§6: non-rewind checkpoints use the session's current max message sequence."""
    await _two_turns(store)
    compactions = CompactionStore(store.pool)
    first = await compactions.insert_checkpoint(checkpoint(expected_max_sequence=4))
    second = await compactions.insert_checkpoint(checkpoint("cp-2"))
    assert (first.sequence, second.sequence) == (1, 2)
    assert first.through_message_sequence == first.replaced_through_message_sequence == 4
    assert first.summary_format_version == 1 and first.checkpoint_format_version == 1
    assert (await compactions.latest_checkpoint("s1")) == second


async def test_a_manual_checkpoint_is_refused_while_a_turn_runs(store: PostgresStore) -> None:
    await _two_turns(store)
    await turn(store, "s1", "t3", [row("t3-user", user_text("third"))], finish=False)
    with pytest.raises(CheckpointCheckFailed, match="running turn"):
        await CompactionStore(store.pool).insert_checkpoint(checkpoint())


async def test_a_threshold_checkpoint_needs_its_trigger_turn_running_in_this_session(
    store: PostgresStore,
) -> None:
    await _two_turns(store)
    compactions = CompactionStore(store.pool)
    with pytest.raises(CheckpointCheckFailed, match="not running"):
        await compactions.insert_checkpoint(
            checkpoint(kind=CompactionKind.THRESHOLD, trigger_turn_id="t2")
        )
    with pytest.raises(CheckpointCheckFailed, match="needs its trigger turn"):
        await compactions.insert_checkpoint(checkpoint(kind=CompactionKind.OVERFLOW))
    await turn(store, "s1", "t3", [row("t3-user", user_text("third"))], finish=False)
    saved = await compactions.insert_checkpoint(
        checkpoint(kind=CompactionKind.THRESHOLD, trigger_turn_id="t3")
    )
    assert saved.trigger_turn_id == "t3" and saved.kind is CompactionKind.THRESHOLD


async def test_the_replayed_message_must_be_a_user_request_of_this_session(
    store: PostgresStore,
) -> None:
    await _two_turns(store)
    await turn(
        store,
        "s1",
        "t3",
        [row("t3-w", user_text("<w/>"), MessageKind.WORLD_STATE), row("t3-user", user_text("x"))],
    )
    await new_session(store, "s2")
    await turn(store, "s2", "u1", [row("other-user", user_text("elsewhere"))])
    compactions = CompactionStore(store.pool)
    for message_id, sequence in [("t1-a", 2), ("t3-w", 5), ("other-user", 1), ("t1-user", 2)]:
        with pytest.raises(CheckpointCheckFailed):
            await compactions.insert_checkpoint(
                checkpoint(last_user_message_id=message_id, last_user_message_sequence=sequence)
            )
    assert await compactions.latest_checkpoint("s1") is None


async def test_a_session_without_messages_cannot_be_compacted(store: PostgresStore) -> None:
    await new_session(store)
    with pytest.raises(CheckpointCheckFailed, match="no message"):
        await CompactionStore(store.pool).insert_checkpoint(checkpoint())


async def test_messages_added_since_the_projection_was_read_reject_the_checkpoint(
    store: PostgresStore,
) -> None:
    await _two_turns(store)
    with pytest.raises(CheckpointCheckFailed, match="changed"):
        await CompactionStore(store.pool).insert_checkpoint(checkpoint(expected_max_sequence=3))


async def test_a_rewind_keeps_its_targets_fact_boundary_and_hides_the_tail(
    store: PostgresStore,
) -> None:
    """§8.3 (4)(5): through = target's fact boundary; replaced = current max sequence."""
    await _two_turns(store)
    compactions = CompactionStore(store.pool)
    target = await compactions.insert_checkpoint(checkpoint())
    await turn(
        store, "s1", "t3", [row("t3-user", user_text("third"))], [row("t3-a", assistant("3"))]
    )
    with pytest.raises(CheckpointCheckFailed, match="target"):
        await compactions.insert_checkpoint(checkpoint("cp-r", kind=CompactionKind.REWIND))
    with pytest.raises(CheckpointCheckFailed, match="fact boundary"):
        await compactions.insert_checkpoint(
            checkpoint(
                "cp-r",
                kind=CompactionKind.REWIND,
                parent_compaction_id=target.id,
                rewind_through_message_sequence=6,
            )
        )
    rewound = await compactions.insert_checkpoint(
        checkpoint(
            "cp-r",
            kind=CompactionKind.REWIND,
            parent_compaction_id=target.id,
            rewind_through_message_sequence=4,
        )
    )
    assert (rewound.through_message_sequence, rewound.replaced_through_message_sequence) == (4, 6)
    assert rewound.parent_compaction_id == target.id
    rows = await compactions.load_projection("s1")
    assert rows.raw == () and rows.checkpoint == rewound
    assert len(await store_rows.session_messages(store.pool, "s1")) == 6, "rewind deletes nothing"


async def test_load_projection_returns_the_replayed_message_and_the_raw_tail(
    store: PostgresStore,
) -> None:
    """§8.1: raw messages after the install boundary keep their MessageKind."""
    await _two_turns(store)
    compactions = CompactionStore(store.pool)
    assert [m.id for m in (await compactions.load_projection("s1")).raw] == [
        "t1-user",
        "t1-a",
        "t2-user",
        "t2-a",
    ]
    await compactions.insert_checkpoint(
        checkpoint(last_user_message_id="t2-user", last_user_message_sequence=3)
    )
    await turn(
        store,
        "s1",
        "t3",
        [row("t3-w", user_text("<w/>"), MessageKind.WORLD_STATE), row("t3-user", user_text("x"))],
    )
    rows = await compactions.load_projection("s1")
    assert rows.replayed is not None and rows.replayed.id == "t2-user"
    assert [(m.id, m.kind) for m in rows.raw] == [
        ("t3-w", MessageKind.WORLD_STATE),
        ("t3-user", MessageKind.NORMAL),
    ]


async def test_the_watermark_only_moves_forward(store: PostgresStore) -> None:
    """§2: GREATEST, never backwards."""
    await _two_turns(store)
    compactions = CompactionStore(store.pool)
    assert await compactions.advance_watermark("s1", 4) == 4
    assert await compactions.advance_watermark("s1", 2) == 4
    assert (await compactions.load_projection("s1")).watermark == 4
    with pytest.raises(RecordNotFound):
        await compactions.advance_watermark("nope", 3)
    with pytest.raises(ValueError, match="> 0"):
        await compactions.advance_watermark("s1", 0)


async def test_transcript_paging_follows_next_after_sequence_and_stops_at_the_fact_boundary(
    store: PostgresStore,
) -> None:
    """§8.4: ordered, LIMIT limit+1, never past through_message_sequence, never synthetic."""
    await new_session(store)
    rest = [row(f"a{n}", assistant(f"answer {n}")) for n in range(24)]
    await turn(store, "s1", "t1", [row("t1-user", user_text("go"))], rest)
    compactions = CompactionStore(store.pool)
    with pytest.raises(NoCheckpoint):
        await compactions.read_transcript("s1")
    cp = await compactions.insert_checkpoint(checkpoint())
    await turn(store, "s1", "t2", [row("t2-user", user_text("after"))])
    first = await compactions.read_transcript("s1")
    assert (len(first.messages), first.has_more, first.next_after_sequence) == (20, True, 20)
    assert first.through_message_sequence == 25 and first.compaction_id == cp.id
    second = await compactions.read_transcript("s1", cp.id, first.next_after_sequence, 50)
    assert [m.sequence for m in second.messages] == [21, 22, 23, 24, 25]
    assert not second.has_more and second.next_after_sequence == 25
    last = await compactions.read_transcript("s1", None, 25, 5)
    assert last.messages == () and not last.has_more and last.next_after_sequence == 25
    exact = await compactions.read_transcript("s1", None, 20, 5)
    assert len(exact.messages) == 5 and not exact.has_more
    assert first.messages[0].kind is MessageKind.NORMAL and first.messages[0].id == "t1-user"


@pytest.mark.parametrize(("after", "limit"), [(0, 0), (0, 51), (-1, 20)])
async def test_transcript_queries_outside_the_ranges_are_rejected(
    store: PostgresStore, after: int, limit: int
) -> None:
    await _two_turns(store)
    with pytest.raises(TranscriptQueryInvalid):
        await CompactionStore(store.pool).read_transcript("s1", None, after, limit)


async def test_an_unknown_compaction_id_is_not_found(store: PostgresStore) -> None:
    await _two_turns(store)
    await CompactionStore(store.pool).insert_checkpoint(checkpoint())
    with pytest.raises(RecordNotFound):
        await CompactionStore(store.pool).read_transcript("s1", "missing")
