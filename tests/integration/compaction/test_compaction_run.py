"""run_compaction, rewind and the prune step end to end: real PostgreSQL, a real Chat State actor
and a scripted model (compaction.md §2, §5, §7, §8)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from openwork_chat_state.actor import ChatStateActor, ChatStateHandle
from openwork_chat_state.item import ConversationItem, MessageKind, SyntheticOrigin, SyntheticReason
from openwork_chat_state.messages import Role, TextBlock, user_text
from openwork_core.context.builder import SystemContextBuilder
from openwork_core.context.engine import ContextEngine
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.models.capabilities import ModelCapabilities
from openwork_core.session.compaction.compacted_view import SUMMARY_PREFIX
from openwork_core.session.compaction.errors import (
    CheckpointRejected,
    CompactionInstallFailed,
    MissingLastUser,
    RewindRejected,
    SummaryRetriesExhausted,
)
from openwork_core.session.compaction.generation import SummarySettings
from openwork_core.session.compaction.loading import load_conversation_items
from openwork_core.session.compaction.prune_step import advance_prune_watermark
from openwork_core.session.compaction.run import CompactionDeps, rewind, run_compaction
from openwork_core.session.compaction.summary import SUMMARY_INSTRUCTION
from openwork_core.storage.codec import decode_message, to_item
from openwork_core.storage.compaction_records import CompactionKind
from openwork_core.storage.postgres.compactions import CompactionStore
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.usage import TokenUsage
from openwork_tools.results import FileChange
from openwork_tools.spill import spill_file_name
from tests.integration.compaction.pg_support import new_session, row, turn
from tests.support import store_rows
from tests.unit.compaction.compaction_support import (
    assistant,
    tool_result,
    turn_plan,
    valid_summary,
)

CAPS = ModelCapabilities(context_window_tokens=200_000, max_output_tokens=32_000)
SYSTEM = SystemContextBuilder().build("You are a careful coding agent.")
BIG = "".join(f"line {n}\n" for n in range(2_000))


async def _no_pause(_: float) -> None:
    return None


def _change(path: str, undone: bool = False) -> FileChange:
    return FileChange(
        change_id=f"fc-{path}",
        path=path,
        kind="created",
        additions=1,
        deletions=0,
        hunks=(),
        before_hash=None,
        after_hash="h",
        before_content=None,
        after_content="x",
        undone=undone,
    )


async def _first_turn(store: PostgresStore) -> None:
    await new_session(store)
    await turn(
        store,
        "s1",
        "t1",
        [
            row(
                "t1-w",
                user_text("<user_project_context>cwd</user_project_context>"),
                MessageKind.WORLD_STATE,
            ),
            row("t1-user", user_text("please refactor the storage layer")),
        ],
        [
            row("t1-a1", assistant("reading", (("call-1", "edit"),))),
            row(
                "t1-r1",
                tool_result("call-1", BIG, "edit"),
                artifacts=[
                    _change("/w/a.py").to_json(),
                    _change("/w/gone.py", undone=True).to_json(),
                ],
            ),
            row("t1-a2", assistant("done")),
        ],
    )


@pytest.fixture
async def chat() -> AsyncIterator[ChatStateHandle]:
    handle = ChatStateActor.spawn()
    try:
        yield handle
    finally:
        await handle.stop()


async def _loaded_chat(store: PostgresStore, chat: ChatStateHandle) -> None:
    loaded = await load_conversation_items(CompactionStore(store.pool), "s1")
    await chat.load(loaded.items, loaded.watermark)


def _deps(store: PostgresStore, chat: ChatStateHandle, model: ScriptedModel) -> CompactionDeps:
    return CompactionDeps(
        session_id="s1",
        store=CompactionStore(store.pool),
        chat=chat,
        engine=ContextEngine(),
        port=model,
        model="scripted-model",
        capabilities=CAPS,
        spill_dir="/spill",
        summary=SummarySettings(pause=_no_pause),
    )


def _shape(items: tuple[ConversationItem, ...]) -> list[tuple[object, ...]]:
    return [(i.message, i.kind, i.origin) for i in items]


async def test_a_manual_compaction_installs_replay_summary_and_reminder_and_reload_reproduces_it(
    store: PostgresStore, chat: ChatStateHandle
) -> None:
    """§7 order, §5 view, §8.1 reload reproduces the projection; checkpoint and raw messages kept."""
    await _first_turn(store)
    await _loaded_chat(store, chat)
    usage = TokenUsage(input_tokens=1_200, output_tokens=300)
    model = ScriptedModel([ScriptedResponse(text="Here:\n" + valid_summary(), usage=usage)])
    result = await run_compaction(
        _deps(store, chat, model), CompactionKind.MANUAL, None, None, SYSTEM
    )

    items = (await chat.context_view()).items
    assert len(items) == 3
    replay, summary, reminder = items
    assert replay.message == user_text("please refactor the storage layer")
    assert replay.origin == SyntheticOrigin(
        compaction_id=result.compaction_id,
        reason=SyntheticReason.LAST_USER_REQUEST_REPLAY,
        source_message_id="t1-user",
        source_sequence=2,
    )
    assert summary.message.text.endswith(valid_summary())
    assert reminder.message.text == (
        '<system_reminder format_version="1">\n## Edited paths\n- /w/a.py\n</system_reminder>'
    )
    assert result.after_tokens < result.before_tokens

    cp = result.checkpoint
    assert (cp.kind, cp.through_message_sequence, cp.replaced_through_message_sequence) == (
        CompactionKind.MANUAL,
        5,
        5,
    )
    assert (cp.input_tokens, cp.output_tokens, cp.source_message_count) == (1_200, 300, 5)
    assert cp.summary == valid_summary() and cp.trigger_turn_id is None
    assert len(await store_rows.session_messages(store.pool, "s1")) == 5, (
        "compaction deletes nothing"
    )

    request = model.requests[0]
    assert request.messages[-1] == user_text(SUMMARY_INSTRUCTION)
    assert not any("user_project_context" in m.text for m in request.messages)
    assert "Full result at /spill/call-1.txt" not in str(request.messages), "no watermark yet"
    model.assert_invariants()

    reloaded = await load_conversation_items(CompactionStore(store.pool), "s1")
    assert _shape(reloaded.items) == _shape(items)


async def test_the_next_request_after_compaction_is_system_replay_summary_reminder_then_new_messages(
    store: PostgresStore, chat: ChatStateHandle
) -> None:
    """§10: World State is re-appended after the compacted items; no System message inside."""
    await _first_turn(store)
    await _loaded_chat(store, chat)
    model = ScriptedModel([ScriptedResponse(text=valid_summary())])
    await run_compaction(_deps(store, chat, model), CompactionKind.MANUAL, None, None, SYSTEM)
    stored = await turn(
        store,
        "s1",
        "t2",
        [
            row(
                "t2-w",
                user_text("<user_project_context>cwd</user_project_context>"),
                MessageKind.WORLD_STATE,
            )
        ],
        [row("t2-user", user_text("now add tests"))],
        finish=False,
    )
    await chat.append_all([to_item(m) for m in stored])
    view = await chat.context_view()
    prepared = ContextEngine().prepare(
        model="m", capabilities=CAPS, system=SYSTEM, view=view, tools=(), spill_dir=None
    )
    roles = [m.role for m in prepared.request.messages]
    assert roles == [Role.SYSTEM] + [Role.USER] * 5
    assert [p.reason for p in prepared.provenance[:3]] == [  # type: ignore[union-attr]
        "last_user_request_replay",
        "compaction_summary",
        "system_reminder",
    ]
    reloaded = await load_conversation_items(CompactionStore(store.pool), "s1")
    assert _shape(reloaded.items) == _shape(view.items)
    assert reloaded.items[3].kind is MessageKind.WORLD_STATE


async def test_a_threshold_compaction_is_linked_to_its_running_turn_and_renders_its_plan(
    store: PostgresStore, chat: ChatStateHandle
) -> None:
    await _first_turn(store)
    await turn(store, "s1", "t2", [row("t2-user", user_text("continue"))], finish=False)
    await _loaded_chat(store, chat)
    plan = turn_plan(("write <tests>", "in_progress"))
    model = ScriptedModel([ScriptedResponse(text=valid_summary())])
    result = await run_compaction(
        _deps(store, chat, model), CompactionKind.THRESHOLD, "t2", plan, SYSTEM
    )
    assert result.checkpoint.trigger_turn_id == "t2"
    assert result.checkpoint.last_user_message_id == "t2-user"
    reminder = (await chat.context_view()).items[2].message.text
    assert "## Current plan\n- [in_progress] write &lt;tests&gt;" in reminder


async def test_three_failed_summaries_write_no_checkpoint_and_keep_the_old_conversation(
    store: PostgresStore, chat: ChatStateHandle
) -> None:
    """§3.3 / §7: failure in steps 1–6 changes nothing."""
    await _first_turn(store)
    await _loaded_chat(store, chat)
    before = (await chat.context_view()).items
    model = ScriptedModel([ScriptedResponse(text="short")] * 3)
    with pytest.raises(SummaryRetriesExhausted):
        await run_compaction(_deps(store, chat, model), CompactionKind.MANUAL, None, None, SYSTEM)
    assert (await chat.context_view()).items == before
    assert await CompactionStore(store.pool).latest_checkpoint("s1") is None


async def test_no_real_user_request_fails_with_missing_last_user_before_any_model_call(
    store: PostgresStore, chat: ChatStateHandle
) -> None:
    await new_session(store)
    await turn(store, "s1", "t1", [row("t1-w", user_text("<w/>"), MessageKind.WORLD_STATE)])
    await _loaded_chat(store, chat)
    model = ScriptedModel([])
    with pytest.raises(MissingLastUser):
        await run_compaction(_deps(store, chat, model), CompactionKind.MANUAL, None, None, SYSTEM)
    assert model.requests == []


class _RefusingInstall(ChatStateHandle):
    async def replace_items(self, items: Sequence[ConversationItem]) -> None:
        raise RuntimeError("chat state refused")


async def test_an_install_failure_keeps_the_committed_checkpoint_and_raises_install_failed(
    store: PostgresStore, chat: ChatStateHandle
) -> None:
    """§7: failure in step 8 does not roll the checkpoint back; the caller sets reload_required."""
    await _first_turn(store)
    await _loaded_chat(store, chat)
    refusing = _RefusingInstall(chat._queue, chat._task)  # same actor, install refused
    model = ScriptedModel([ScriptedResponse(text=valid_summary())])
    with pytest.raises(CompactionInstallFailed) as caught:
        await run_compaction(
            _deps(store, refusing, model), CompactionKind.MANUAL, None, None, SYSTEM
        )
    latest = await CompactionStore(store.pool).latest_checkpoint("s1")
    assert latest is not None and latest.id == caught.value.compaction_id
    assert caught.value.code == "compaction_install_failed"
    assert len((await chat.context_view()).items) == 5, "Chat State still holds the old items"


async def test_rewind_reuses_the_target_summary_without_a_model_call_and_hides_the_tail(
    store: PostgresStore, chat: ChatStateHandle
) -> None:
    """§8.3: no model call, target's replay and summary, tail hidden but never deleted."""
    await _first_turn(store)
    await _loaded_chat(store, chat)
    first_summary = valid_summary({1: "The first summary covers the refactor request in detail."})
    model = ScriptedModel(
        [ScriptedResponse(text=first_summary), ScriptedResponse(text=valid_summary())]
    )
    deps = _deps(store, chat, model)
    first = await run_compaction(deps, CompactionKind.MANUAL, None, None, SYSTEM)
    stored = await turn(
        store,
        "s1",
        "t2",
        [row("t2-user", user_text("abandoned idea"))],
        [row("t2-a", assistant("ok"))],
    )
    await chat.append_all([to_item(m) for m in stored])
    await run_compaction(deps, CompactionKind.MANUAL, None, None, SYSTEM)

    result = await rewind(deps, first.compaction_id, SYSTEM)
    assert len(model.requests) == 2, "rewind makes no model call"
    cp = result.checkpoint
    assert cp.kind is CompactionKind.REWIND and cp.parent_compaction_id == first.compaction_id
    assert cp.summary == first_summary
    assert (cp.through_message_sequence, cp.replaced_through_message_sequence) == (5, 7)
    items = (await chat.context_view()).items
    assert items[0].message == user_text("please refactor the storage layer")
    assert "abandoned idea" not in str([i.message for i in items])
    assert len(await store_rows.session_messages(store.pool, "s1")) == 7
    reloaded = await load_conversation_items(CompactionStore(store.pool), "s1")
    assert _shape(reloaded.items) == _shape(items)
    page = await CompactionStore(store.pool).read_transcript("s1")
    assert page.through_message_sequence == 5


async def test_the_prune_step_writes_spill_files_then_advances_and_installs_the_watermark(
    store: PostgresStore, chat: ChatStateHandle, tmp_path: Path
) -> None:
    """§2: reload → spill files → replace items → write watermark → install; no checkpoint."""
    await _first_turn(store)
    await _loaded_chat(store, chat)
    compactions = CompactionStore(store.pool)
    assert await advance_prune_watermark(compactions, chat, "s1", str(tmp_path))
    assert (tmp_path / spill_file_name("call-1")).read_text(encoding="utf-8") == BIG
    assert (await chat.context_view()).tool_result_pruned_through_sequence == 5
    assert (await compactions.load_projection("s1")).watermark == 5
    assert await compactions.latest_checkpoint("s1") is None
    assert not await advance_prune_watermark(compactions, chat, "s1", str(tmp_path)), "nothing new"
    prepared = ContextEngine().prepare(
        model="m",
        capabilities=CAPS,
        system=SYSTEM,
        view=await chat.context_view(),
        tools=(),
        spill_dir=str(tmp_path),
    )
    pruned = prepared.request.messages[4].tool_results[0].output[0]
    assert isinstance(pruned, TextBlock)
    assert f"Full result at {tmp_path}/call-1.txt" in pruned.text
    stored = next(m for m in await store_rows.session_messages(store.pool, "s1") if m.id == "t1-r1")
    kept = decode_message(stored).tool_results[0].output[0]
    assert kept == TextBlock(text=BIG), "the stored result is never changed"
    item = (await chat.context_view()).items[3]
    assert item.message.tool_results[0].output[0] == TextBlock(text=BIG), "Chat State keeps it too"


async def test_results_of_the_latest_response_are_never_pruned(
    store: PostgresStore, chat: ChatStateHandle, tmp_path: Path
) -> None:
    """§2: the latest response's results have a higher sequence than the watermark."""
    await new_session(store)
    await turn(
        store,
        "s1",
        "t1",
        [row("t1-user", user_text("go"))],
        [
            row("t1-a1", assistant("", (("call-9", "read"),))),
            row("t1-r1", tool_result("call-9", BIG)),
        ],
    )
    await _loaded_chat(store, chat)
    assert await advance_prune_watermark(CompactionStore(store.pool), chat, "s1", str(tmp_path))
    assert (await chat.context_view()).tool_result_pruned_through_sequence == 2
    assert not os.listdir(tmp_path), "no spill file for the latest response's result"
    prepared = ContextEngine().prepare(
        model="m",
        capabilities=CAPS,
        system=SYSTEM,
        view=await chat.context_view(),
        tools=(),
        spill_dir=str(tmp_path),
    )
    assert prepared.request.messages[3].tool_results[0].output[0] == TextBlock(text=BIG)


async def test_a_failing_prune_step_means_no_pruning_this_time(
    store: PostgresStore, chat: ChatStateHandle, tmp_path: Path
) -> None:
    await _first_turn(store)
    await _loaded_chat(store, chat)
    blocked = tmp_path / "file"
    blocked.write_text("not a directory", encoding="utf-8")
    assert not await advance_prune_watermark(CompactionStore(store.pool), chat, "s1", str(blocked))
    assert (await chat.context_view()).tool_result_pruned_through_sequence is None
    assert (await CompactionStore(store.pool).load_projection("s1")).watermark is None


async def test_compacting_again_without_a_new_request_replays_the_original_message_and_summarises_the_old_summary(
    store: PostgresStore, chat: ChatStateHandle
) -> None:
    """§5: a replay qualifies as the last real user request and keeps pointing at the original;
    §3.1: the older summary projection is part of the summary input."""
    await _first_turn(store)
    await _loaded_chat(store, chat)
    model = ScriptedModel([ScriptedResponse(text=valid_summary())] * 2)
    deps = _deps(store, chat, model)
    first = await run_compaction(deps, CompactionKind.MANUAL, None, None, SYSTEM)
    second = await run_compaction(deps, CompactionKind.MANUAL, None, None, SYSTEM)
    assert (
        second.checkpoint.last_user_message_id == first.checkpoint.last_user_message_id == "t1-user"
    )
    assert second.checkpoint.sequence == 2
    assert any(SUMMARY_PREFIX in m.text for m in model.requests[1].messages)
    replay = (await chat.context_view()).items[0]
    assert isinstance(replay.origin, SyntheticOrigin)
    assert (replay.origin.compaction_id, replay.origin.source_sequence) == (second.compaction_id, 2)
    assert second.timings.install_ms >= 0


async def test_rewind_refuses_an_unknown_target_and_a_running_turn(
    store: PostgresStore, chat: ChatStateHandle
) -> None:
    await _first_turn(store)
    await _loaded_chat(store, chat)
    deps = _deps(store, chat, ScriptedModel([ScriptedResponse(text=valid_summary())]))
    first = await run_compaction(deps, CompactionKind.MANUAL, None, None, SYSTEM)
    with pytest.raises(RewindRejected):
        await rewind(deps, "no-such-checkpoint", SYSTEM)
    await turn(store, "s1", "t2", [row("t2-user", user_text("busy"))], finish=False)
    with pytest.raises(CheckpointRejected, match="running turn"):
        await rewind(deps, first.compaction_id, SYSTEM)
    assert (await CompactionStore(store.pool).latest_checkpoint("s1")) == first.checkpoint


async def test_the_trigger_turn_is_named_by_threshold_and_overflow_compactions_only(
    store: PostgresStore, chat: ChatStateHandle
) -> None:
    await _first_turn(store)
    model = ScriptedModel([])
    deps = _deps(store, chat, model)
    with pytest.raises(ValueError, match="trigger turn"):
        await run_compaction(deps, CompactionKind.OVERFLOW, None, None, SYSTEM)
    with pytest.raises(ValueError, match="trigger turn"):
        await run_compaction(deps, CompactionKind.MANUAL, "t1", None, SYSTEM)
    with pytest.raises(ValueError, match="rewind"):
        await run_compaction(deps, CompactionKind.REWIND, None, None, SYSTEM)
    assert model.requests == []
