"""Compaction inside real turns and through the core (compaction.md §1–§8; context-window.md
§7.2, §11 items 19–21; issue 7)."""

from __future__ import annotations

import math
from pathlib import Path

import orjson
import pytest

from openwork_chat_state.messages import Role, TextBlock
from openwork_core.context.world_state.user_project import (
    USER_PROJECT_CONTEXT_REPLACEMENT_NOTICE,
    USER_PROJECT_CONTEXT_TAG,
)
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.models.port import (
    DeliveryState,
    ErrorPhase,
    ModelError,
    ModelErrorKind,
    ModelRequest,
)
from openwork_core.session.compaction.compacted_view import SUMMARY_PREFIX
from openwork_core.session.compaction.errors import CompactionError
from openwork_core.session.compaction.policy import INEFFECTIVE_COMPACTION_MESSAGE, CompactionEffect
from openwork_core.session.compaction.summary import SUMMARY_INSTRUCTION
from openwork_core.session.errors import ReloadRequired, SessionActive
from openwork_core.session.input import TextInput
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import TurnStatus
from tests.support import store_rows
from tests.support.runtime import Runtime, provider_with_window, runtime
from tests.unit.compaction.compaction_support import valid_summary

SUMMARY = ScriptedResponse(text=valid_summary())


def _texts(request: ModelRequest) -> list[tuple[str, str]]:
    return [
        (m.role.value, "".join(b.text for b in m.content if isinstance(b, TextBlock)))
        for m in request.messages
    ]


def _system_and_tools(request: ModelRequest) -> bytes:
    system = [m for m in request.messages if m.role is Role.SYSTEM]
    return orjson.dumps([system, request.tools])


def _overflow() -> ModelError:
    return ModelError(
        ModelErrorKind.CONTEXT_OVERFLOW,
        "maximum context length exceeded",
        phase=ErrorPhase.RESPONSE_HEADERS,
        delivery=DeliveryState.ACCEPTED_NO_SEMANTIC_OUTPUT,
        provider_code="context_length_exceeded",
    )


EARLIER = "an earlier request, long enough for a summary to shrink: " + "context " * 200
"""A first turn's request: a Conversation a compaction can shrink (issue 24 point 1)."""


async def _window_for(store: PostgresStore, tmp_path: Path, headroom: int) -> int:
    """A context window whose compaction line sits ``headroom`` tokens above a fresh session's
    first request (so one large tool result crosses it)."""
    async with runtime(store, tmp_path / "probe", ScriptedModel()) as rt:
        sid = await rt.new_session()
        base = (await rt.core.inspect_context_window(sid)).budget.estimated_input_tokens
    output = 1_000
    line = base + 600 + output + headroom  # 600: the first World State messages and the request
    return math.ceil(line / 0.85) + output


async def _checkpoints(store: PostgresStore, sid: str) -> list[tuple[str, str | None]]:
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT kind, trigger_turn_id FROM conversation_compactions WHERE session_id = $1 ORDER BY sequence",
            sid,
        )
    return [(r["kind"], r["trigger_turn_id"]) for r in rows]


async def test_threshold_compaction_summarises_before_the_submission_and_keeps_the_prefix(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§1 threshold, §3.1 summary request, §5 view, issue 7 items 5–6: the request after the
    compaction is System, replay, summary, reminder, then World State as first appearances;
    System Context and tool definitions are byte-identical across it."""
    window = await _window_for(store, tmp_path, headroom=1_500)
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=(("c1", "read", {"path": "big.txt"}),)),
            SUMMARY,
            ScriptedResponse(text="summarised and done"),
        ]
    )
    async with runtime(store, tmp_path, model, provider=provider_with_window(window, 1_000)) as rt:
        (rt.workspace / "big.txt").write_text(("x" * 79 + "\n") * 300)
        sid = await rt.new_session()
        turn_id, updates = await rt.run_turn(sid, "summarise the big file")
        view = await rt.core.turn_view(sid, turn_id)
        assert (view.status, view.model_calls) == (TurnStatus.COMPLETED, 2)
        assert "compacting" in [getattr(u.update, "phase", None) for u in updates]
    first, summary_request, after = model.requests
    assert summary_request.tools == ()
    assert summary_request.thinking is not None
    assert summary_request.thinking.mode == "disabled"
    assert summary_request.max_output_tokens == 1_000
    assert _texts(summary_request)[-1] == ("user", SUMMARY_INSTRUCTION)
    assert not any(t.startswith(USER_PROJECT_CONTEXT_TAG) for _, t in _texts(summary_request))
    conversation = _texts(after)[1:]
    assert conversation[0] == ("user", "summarise the big file")
    assert conversation[1][1].startswith(SUMMARY_PREFIX)
    assert conversation[2][1].startswith('<system_reminder format_version="1">')
    assert conversation[3][1].startswith(USER_PROJECT_CONTEXT_TAG), "a first appearance, no notice"
    assert not conversation[3][1].startswith(USER_PROJECT_CONTEXT_REPLACEMENT_NOTICE)
    assert _system_and_tools(first) == _system_and_tools(after)
    assert await _checkpoints(store, sid) == [("threshold", turn_id)]
    row = await store.get_turn(sid, turn_id)
    assert (row.model_call_count, row.model_submission_count) == (2, 2)


async def test_a_failed_threshold_summary_fails_the_turn_naming_the_window_and_the_fix(
    store: PostgresStore, tmp_path: Path
) -> None:
    """compaction.md §7 (an in-turn compaction failure fails the turn ``compaction_error``) and
    issue 24 (the user is told the window is the reason and what to change): a model that
    cannot write the summary three times ends the turn with the summary's failure, the window
    whose line the request reached, its regions and the fix; nothing is checkpointed."""
    window = await _window_for(store, tmp_path, headroom=1_500)
    not_a_summary = ScriptedResponse(text="Hello! How can I help you today?")
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=(("c1", "read", {"path": "big.txt"}),)),
            not_a_summary,
            not_a_summary,
            not_a_summary,
        ]
    )
    async with runtime(store, tmp_path, model, provider=provider_with_window(window, 1_000)) as rt:
        (rt.workspace / "big.txt").write_text(("x" * 79 + "\n") * 300)
        sid = await rt.new_session()
        turn_id, _ = await rt.run_turn(sid, "summarise the big file")
        view = await rt.core.turn_view(sid, turn_id)
    assert (view.status, view.error_code) == (TurnStatus.FAILED, "compaction_error")
    assert view.message.startswith("summary_retries_exhausted: "), view.message
    assert f"compaction line of the model's {window}-token context window" in view.message
    assert "System Context ≈" in view.message and "1000 reserved for output" in view.message
    assert "llama.cpp -c" in view.message and "OPENWORK_MODEL_CONTEXT_WINDOW" in view.message
    assert len(model.requests) == 4, "the first call and three summary attempts"
    assert await _checkpoints(store, sid) == []


async def test_an_explicit_overflow_compacts_and_resubmits_once_with_a_new_submission_id(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§1 overflow, §8.2: same turn, same logical call, `<turn>-model-<n>-submission-2`."""
    model = ScriptedModel(
        [ScriptedResponse(text="ok"), _overflow(), SUMMARY, ScriptedResponse(text="fits now")]
    )
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        await rt.run_turn(sid, EARLIER)
        turn_id, _ = await rt.run_turn(sid, "hello")
        view = await rt.core.turn_view(sid, turn_id)
        assert (view.status, view.final_text) == (TurnStatus.COMPLETED, "fits now")
    assert [o.model_attempt_id for o in model.options][-1] == f"{turn_id}-model-1-submission-2"
    assert await _checkpoints(store, sid) == [("overflow", turn_id)]
    row = await store.get_turn(sid, turn_id)
    assert (row.model_call_count, row.model_submission_count) == (1, 2)


async def test_a_second_overflow_after_a_compaction_fails_the_turn_model_error(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§1: at most one compaction per logical model call; never an endless cycle."""
    model = ScriptedModel([ScriptedResponse(text="ok"), _overflow(), SUMMARY, _overflow()])
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        await rt.run_turn(sid, EARLIER)
        turn_id, _ = await rt.run_turn(sid, "hello")
        view = await rt.core.turn_view(sid, turn_id)
        assert (view.status, view.error_code) == (TurnStatus.FAILED, "model_error")
    assert len(model.requests) == 4


async def test_an_overflow_no_compaction_can_fix_fails_context_window_too_small_at_once(
    store: PostgresStore, tmp_path: Path
) -> None:
    """Issue 24 point 1 (docs/compaction.md "Compaction only when it can help"): the first
    request of a session overflows — nothing a summary could shrink — so no summary is asked
    for; the message names the window, the three regions and what to change."""
    model = ScriptedModel([_overflow()])
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        turn_id, _ = await rt.run_turn(sid, "hello")
        view = await rt.core.turn_view(sid, turn_id)
    assert (view.status, view.error_code) == (TurnStatus.FAILED, "context_window_too_small")
    assert view.message is not None
    for named in ("200000-token context window", "System Context", "Tools", "Conversation"):
        assert named in view.message
    assert "OPENWORK_MODEL_CONTEXT_WINDOW" in view.message and "num_ctx" in view.message
    assert len(model.requests) == 1, "no summary was attempted"
    assert await _checkpoints(store, sid) == []


async def test_an_overflow_after_semantic_output_is_a_plain_model_error(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§1: only an explicit overflow before any semantic output triggers compaction."""
    late = ModelError(
        ModelErrorKind.CONTEXT_OVERFLOW,
        "overflow mid-stream",
        phase=ErrorPhase.STREAM_DECODE,
        delivery=DeliveryState.SEMANTIC_OUTPUT_EMITTED,
    )
    model = ScriptedModel([ScriptedResponse(text="partial", error=late)])
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        turn_id, _ = await rt.run_turn(sid, "hello")
        view = await rt.core.turn_view(sid, turn_id)
        assert (view.status, view.error_code) == (TurnStatus.FAILED, "model_error")
    assert await _checkpoints(store, sid) == []


async def test_manual_compaction_is_idle_only_and_rewind_hides_the_tail_without_deleting(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§1 manual and rewind, §8.3: messages are never deleted; reload reproduces the projection."""
    model = ScriptedModel(
        [
            ScriptedResponse(text="one"),
            SUMMARY,
            ScriptedResponse(text="two"),
            ScriptedResponse(
                text=valid_summary(
                    {1: "A second summary, different from the first one, for the rewind."}
                )
            ),
        ]
    )
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        await rt.run_turn(sid, "first request")
        first = await rt.core.compact(sid)
        assert first.before_tokens > 0
        await rt.run_turn(sid, "second request")
        second = await rt.core.compact(sid)
        total = len(await store_rows.session_messages(store.pool, sid))
        rewound = await rt.core.rewind(sid, first.compaction_id)
        assert len(await store_rows.session_messages(store.pool, sid)) == total, "nothing deleted"
        await rt.core.sessions.load(sid)
        view = await rt.services[sid].chat.context_view()
        assert view.items[0].message.text == "first request"
        assert len(view.items) == 3
        assert rewound.compaction_id not in (first.compaction_id, second.compaction_id)
    async with runtime(store, tmp_path, ScriptedModel()) as rt:
        await rt.core.sessions.load(sid)
        reloaded = await rt.services[sid].chat.context_view()
        assert [i.message for i in reloaded.items] == [i.message for i in view.items]
    assert [k for k, _ in await _checkpoints(store, sid)] == ["manual", "manual", "rewind"]


async def test_manual_compaction_during_a_turn_answers_session_active(
    store: PostgresStore, tmp_path: Path
) -> None:
    import asyncio

    release = asyncio.Event()

    async def held(_request: ModelRequest):  # type: ignore[no-untyped-def]
        await release.wait()
        from openwork_core.models.adapters.scripted import scripted_events

        for event in scripted_events(ScriptedResponse(text="done")):
            yield event

    model = ScriptedModel([held])
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        accepted = await rt.core.start_turn(
            sid, client_request_id="r", inputs=[TextInput(text="x")]
        )
        await model.wait_for_requests(1, timeout=10)
        with pytest.raises(SessionActive):
            await rt.core.compact(sid)
        release.set()
        assert accepted.turn_id


async def test_a_checkpoint_that_cannot_be_installed_refuses_the_next_turn_then_reloads(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§7 (untested in the original): committed but not installed → reload_required → 409,
    then the session is rebuilt from the database and shows the committed projection."""
    runtime_box: list[Runtime] = []
    session_box: list[str] = []

    async def summary_that_breaks_the_chat_state(_request: ModelRequest):  # type: ignore[no-untyped-def]
        await runtime_box[0].services[session_box[0]].chat.stop()
        from openwork_core.models.adapters.scripted import scripted_events

        for event in scripted_events(SUMMARY):
            yield event

    model = ScriptedModel(
        [
            ScriptedResponse(text="one"),
            summary_that_breaks_the_chat_state,
            ScriptedResponse(text="two"),
        ]
    )
    async with runtime(store, tmp_path, model) as rt:
        runtime_box.append(rt)
        sid = await rt.new_session()
        session_box.append(sid)
        await rt.run_turn(sid, "first")
        with pytest.raises(CompactionError) as excinfo:
            await rt.core.compact(sid)
        assert excinfo.value.code == "compaction_install_failed"
        with pytest.raises(ReloadRequired):
            await rt.core.start_turn(
                sid, client_request_id="after", inputs=[TextInput(text="again")]
            )
        turn_id, _ = await rt.run_turn(sid, "again")
        assert (await rt.core.turn_view(sid, turn_id)).status is TurnStatus.COMPLETED
    conversation = _texts(model.requests[-1])
    assert conversation[2][1].startswith(SUMMARY_PREFIX), "rebuilt from the checkpoint"


async def test_two_ineffective_automatic_compactions_make_the_next_one_fail_fast(
    store: PostgresStore, tmp_path: Path
) -> None:
    """Issue 7 item 9 (beyond the original): no endless compact–overflow cycle."""
    model = ScriptedModel([ScriptedResponse(text="ok"), _overflow()])
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        await rt.run_turn(sid, EARLIER)
        history = rt.services[sid].compaction_history
        history.automatic.extend([CompactionEffect(before_tokens=1000, after_tokens=950)] * 2)
        turn_id, _ = await rt.run_turn(sid, "hello")
        view = await rt.core.turn_view(sid, turn_id)
        assert (view.status, view.error_code) == (TurnStatus.FAILED, "compaction_error")
        assert view.message == INEFFECTIVE_COMPACTION_MESSAGE
    assert len(model.requests) == 2, "no summary was attempted"


async def test_conversation_history_pages_raw_messages_never_past_the_fact_boundary(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§8.4: the tool and the endpoint share one query; never synthetic items."""
    model = ScriptedModel(
        [
            ScriptedResponse(text="one"),
            SUMMARY,
            ScriptedResponse(tool_calls=(("h1", "conversation_history", {"limit": 2}),)),
            ScriptedResponse(text="looked"),
        ]
    )
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        await rt.run_turn(sid, "first request")
        checkpoint = await rt.core.compact(sid)
        await rt.run_turn(sid, "what did I say?")
        page = await rt.core.read_transcript(sid, compaction_id=None, after_sequence=0, limit=2)
        assert page.compaction_id == checkpoint.compaction_id
        assert [m.sequence for m in page.messages] == [1, 2]
        assert page.has_more
        rest = await rt.core.read_transcript(
            sid, compaction_id=None, after_sequence=page.next_after_sequence, limit=50
        )
        assert all(m.sequence <= page.through_message_sequence for m in rest.messages)
        assert not rest.has_more
    (result,) = model.requests[-1].messages[-1].tool_results
    assert result.id == "h1"
    document = orjson.loads(result.output[0].text)  # type: ignore[union-attr]
    assert document["hasMore"] is True
    assert [m["sequence"] for m in document["messages"]] == [1, 2]


async def test_pruning_alone_can_make_room_and_creates_no_checkpoint(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§2: old tool results over 8 192 characters are pruned in the request copy; when that is
    enough there is no summary and no checkpoint; the full result stays readable from the spill
    file the marker names, and the stored message is unchanged."""
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=(("c1", "read", {"path": "big.txt"}),)),
            ScriptedResponse(text="read it"),
            ScriptedResponse(text="second turn"),
        ]
    )
    async with runtime(store, tmp_path, model) as rt:
        (rt.workspace / "big.txt").write_text(
            "".join(f"line {i:05d} {'z' * 60}\n" for i in range(400))
        )
        sid = await rt.new_session()
        await rt.run_turn(sid, "read the file")
        after_first = (await rt.core.inspect_context_window(sid)).budget.estimated_input_tokens
        # tighten the window: the next request (+ a 2 000-character message) is at the line
        output = 1_000
        line = after_first + output + 200
        await store.upsert_provider(provider_with_window(math.ceil(line / 0.85) + output, output))
        turn_id, _ = await rt.run_turn(sid, "and now? " + "p" * 2_000)
        assert (await rt.core.turn_view(sid, turn_id)).status is TurnStatus.COMPLETED
        spill_dir = rt.core.home / "spill" / sid
    assert await _checkpoints(store, sid) == []
    assert len(model.requests) == 3, "no summary request"
    (pruned,) = [b for m in model.requests[2].messages for b in m.tool_results]
    text = pruned.output[0].text  # type: ignore[union-attr]
    marker = (
        f"characters omitted. Full result at {spill_dir}/c1.txt — read it if you still need it]"
    )
    assert marker in text
    assert text.startswith("1\tline 00000")
    assert len(text) < 4_096 + 1_024 + 300
    full = (spill_dir / "c1.txt").read_text()
    (stored,) = [b for m in model.requests[1].messages for b in m.tool_results]
    assert full == stored.output[0].text  # type: ignore[union-attr]
    async with store.pool.acquire() as conn:
        watermark = await conn.fetchval(
            "SELECT tool_result_pruned_through_sequence FROM sessions WHERE id = $1", sid
        )
    assert watermark is not None
