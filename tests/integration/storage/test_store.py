"""PostgresStore against real PostgreSQL: write order, constraints, restart correction (storage.md)."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import orjson
import pytest

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import (
    Message,
    Role,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
    user_text,
)
from openwork_core.storage.codec import new_message, to_item
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import TurnStatus
from openwork_tools.modes import SandboxMode
from tests.support import store_rows


async def _session(store: PostgresStore, sid: str = "s1") -> None:
    await store.create_session(
        session_id=sid,
        working_directory="/tmp",
        agent="default",
        provider_id=None,
        model_name=None,
        sandbox_mode=SandboxMode.AUTO,
    )


async def _turn(store: PostgresStore, tid: str, sid: str = "s1", crid: str | None = None) -> None:
    await store_rows.start_turn(
        store.pool,
        session_id=sid,
        turn_id=tid,
        client_request_id=crid or f"req-{tid}",
        provider_id="p",
        model_name="m",
        app_version="test",
        messages=[new_message(f"{tid}-user", user_text("hello"), MessageKind.NORMAL)],
    )


async def test_a_turn_row_and_its_user_message_are_written_together(store: PostgresStore) -> None:
    """storage.md §3: the turn row and the user message in one transaction."""
    await _session(store)
    turn, stored = await store_rows.start_turn(
        store.pool,
        session_id="s1",
        turn_id="t1",
        client_request_id="c1",
        provider_id="p",
        model_name="m",
        app_version="test",
        messages=[
            new_message("m-skill", user_text("<skill>…</skill>"), MessageKind.SKILL_INSTRUCTION),
            new_message("m-user", user_text("hello"), MessageKind.NORMAL),
        ],
    )
    assert turn.status is TurnStatus.RUNNING and turn.sequence == 1
    assert [(m.id, m.sequence, m.kind) for m in stored] == [
        ("m-skill", 1, MessageKind.SKILL_INSTRUCTION),
        ("m-user", 2, MessageKind.NORMAL),
    ]


async def test_a_failed_message_insert_leaves_no_turn_row(store: PostgresStore) -> None:
    """storage.md §3: nothing half-written when the user message cannot be stored."""
    await _session(store)
    bad = new_message("", user_text("x"), MessageKind.NORMAL)  # blank id violates a CHECK
    with pytest.raises(asyncpg.CheckViolationError):
        await store_rows.start_turn(
            store.pool,
            session_id="s1",
            turn_id="t1",
            client_request_id="c1",
            provider_id="p",
            model_name="m",
            app_version="test",
            messages=[bad],
        )
    assert await store.get_turn_by_client_request("s1", "c1") is None


async def test_at_most_one_running_turn_per_session(store: PostgresStore) -> None:
    """storage.md §4: uq_turns_one_running_per_session."""
    await _session(store)
    await _turn(store, "t1")
    with pytest.raises(asyncpg.UniqueViolationError):
        await _turn(store, "t2")


async def test_restart_correction_marks_running_turns_interrupted_and_frees_the_session(
    store: PostgresStore, tmp_path: Path
) -> None:
    """session-runtime.md §10: running → interrupted with process_restart; a new turn can start.
    Through the product's restart correction (issue 23 point 4): a daemon registering
    (``PostgresOwnership.register``) interrupts the running turns no live lease holds."""
    await _session(store)
    await _turn(store, "t1")
    assert await store_rows.restart_correction(store.pool, tmp_path) == 1
    turn = await store.get_turn("s1", "t1")
    assert turn.status is TurnStatus.INTERRUPTED
    assert turn.error_code == "process_restart"
    assert turn.ended_at is not None and turn.ended_at >= turn.started_at
    await _turn(store, "t2")


async def test_rewriting_a_message_with_the_same_id_is_a_no_op(store: PostgresStore) -> None:
    """context-window.md §3: deterministic World State ids make repeated writes idempotent."""
    await _session(store)
    await _turn(store, "t1")
    ws = new_message(
        "world-state:t1:1:1:project/AGENTS.md", user_text("x"), MessageKind.WORLD_STATE
    )
    (first,) = await store_rows.append_messages(store.pool, "s1", "t1", [ws])
    (again,) = await store_rows.append_messages(store.pool, "s1", "t1", [ws])
    assert again.sequence == first.sequence
    assert len(await store_rows.session_messages(store.pool, "s1")) == 2


async def test_one_tool_result_per_provider_call_per_turn(store: PostgresStore) -> None:
    """storage.md §2: uq_messages_tool_result."""
    await _session(store)
    await _turn(store, "t1")
    call = ToolCallBlock(id="call-1", name="read", input="{}")
    await store_rows.append_messages(
        store.pool,
        "s1",
        "t1",
        [new_message("a1", Message(role=Role.ASSISTANT, content=(call,)), MessageKind.NORMAL)],
    )
    result = Message(
        role=Role.TOOL,
        content=(
            ToolResultBlock(
                id="call-1",
                name="read",
                output=(TextBlock(text="ok"),),
                state=ToolResultState.SUCCESS,
            ),
        ),
    )
    await store_rows.append_messages(
        store.pool, "s1", "t1", [new_message("r1", result, MessageKind.NORMAL)]
    )
    with pytest.raises(asyncpg.UniqueViolationError):
        await store_rows.append_messages(
            store.pool, "s1", "t1", [new_message("r2", result, MessageKind.NORMAL)]
        )


async def test_artifacts_are_stored_beside_the_result_and_never_reach_the_item(
    store: PostgresStore,
) -> None:
    """tools.md §8: artifacts are UI-only; the conversation item carries none."""
    await _session(store)
    await _turn(store, "t1")
    await store_rows.append_messages(
        store.pool,
        "s1",
        "t1",
        [
            new_message(
                "a1",
                Message(
                    role=Role.ASSISTANT,
                    content=(ToolCallBlock(id="c", name="write", input="{}"),),
                ),
                MessageKind.NORMAL,
            )
        ],
    )
    result = Message(
        role=Role.TOOL,
        content=(
            ToolResultBlock(
                id="c",
                name="write",
                output=(TextBlock(text="Created a"),),
                state=ToolResultState.SUCCESS,
            ),
        ),
    )
    artifact = {"kind": "file_change", "payload": {"path": "a"}}
    (stored,) = await store_rows.append_messages(
        store.pool, "s1", "t1", [new_message("r1", result, MessageKind.NORMAL, [artifact])]
    )
    assert orjson.loads(stored.content)[0]["artifacts"] == [artifact]
    assert to_item(stored).message == result
    assert b"artifacts" not in orjson.dumps(to_item(stored).message)


async def test_a_session_cannot_store_a_tool_message_without_call_identity(
    store: PostgresStore,
) -> None:
    """storage.md §2: messages_tool_identity_valid."""
    await _session(store)
    await _turn(store, "t1")
    bad = new_message("x", user_text("y"), MessageKind.NORMAL)
    bad = type(bad)(id="x", role=Role.TOOL, kind=MessageKind.NORMAL, content=bad.content)
    with pytest.raises(asyncpg.CheckViolationError):
        await store_rows.append_messages(store.pool, "s1", "t1", [bad])
