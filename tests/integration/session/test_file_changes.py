"""Undo and reapply of recorded file changes (tools.md §8): a user action on an idle session;
conflicts overwrite nothing; the stored artifact's ``undone`` flag follows the files."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest

from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse, scripted_events
from openwork_core.models.port import ModelEvent, ModelRequest
from openwork_core.session.errors import SessionActive
from openwork_core.session.file_changes import UnknownFileChange
from openwork_core.session.input import TextInput
from openwork_core.storage.postgres.store import PostgresStore
from openwork_tools.errors import ChangeConflict, ChangeStateMismatch
from openwork_tools.undo import ChangeDirection
from tests.support import store_rows
from tests.support.runtime import Runtime, runtime


async def _changes(store: PostgresStore, sid: str) -> list[tuple[str, str, bool]]:
    found: list[tuple[str, str, bool]] = []
    for message in await store_rows.session_messages(store.pool, sid):
        for block in orjson.loads(message.content):
            for artifact in block.get("artifacts") or ():
                found.append((artifact["changeId"], artifact["path"], artifact["undone"]))
    return found


async def _create_and_edit(rt: Runtime) -> str:
    rt.model.push(
        ScriptedResponse(tool_calls=(("w1", "write", {"path": "a.txt", "content": "one\n"}),)),
        ScriptedResponse(
            tool_calls=(
                ("e1", "edit", {"filePath": "a.txt", "oldString": "one", "newString": "two"}),
            )
        ),
        ScriptedResponse(text="done"),
    )
    sid = await rt.new_session()
    await rt.run_turn(sid, "make a file")
    assert (rt.workspace / "a.txt").read_text() == "two\n"
    return sid


async def test_undo_reverts_in_reverse_order_and_reapply_restores_in_order(
    store: PostgresStore, tmp_path: Path
) -> None:
    async with runtime(store, tmp_path, ScriptedModel()) as rt:
        sid = await _create_and_edit(rt)
        (create, _, _), (edit, _, _) = await _changes(store, sid)
        undone = await rt.core.apply_file_changes(sid, [create, edit], ChangeDirection.UNDO)
        assert [c.undone for c in undone] == [True, True]
        assert not (rt.workspace / "a.txt").exists(), "the created file is gone again"
        assert [u for _, _, u in await _changes(store, sid)] == [True, True]
        with pytest.raises(ChangeStateMismatch):
            await rt.core.apply_file_changes(sid, [edit], ChangeDirection.UNDO)
        await rt.core.apply_file_changes(sid, [create, edit], ChangeDirection.REAPPLY)
        assert (rt.workspace / "a.txt").read_text() == "two\n"
        assert [u for _, _, u in await _changes(store, sid)] == [False, False]


async def test_a_file_changed_afterwards_is_a_conflict_and_nothing_is_overwritten(
    store: PostgresStore, tmp_path: Path
) -> None:
    async with runtime(store, tmp_path, ScriptedModel()) as rt:
        sid = await _create_and_edit(rt)
        (create, _, _), (edit, _, _) = await _changes(store, sid)
        (rt.workspace / "a.txt").write_text("the user's own edit\n")
        with pytest.raises(ChangeConflict):
            await rt.core.apply_file_changes(sid, [create, edit], ChangeDirection.UNDO)
        assert (rt.workspace / "a.txt").read_text() == "the user's own edit\n"
        assert [u for _, _, u in await _changes(store, sid)] == [False, False]
        with pytest.raises(UnknownFileChange):
            await rt.core.apply_file_changes(sid, ["no-such-change"], ChangeDirection.UNDO)


async def test_undo_is_refused_while_a_turn_runs(store: PostgresStore, tmp_path: Path) -> None:
    release = asyncio.Event()

    async def held(_request: ModelRequest) -> AsyncIterator[ModelEvent]:
        await release.wait()
        for event in scripted_events(ScriptedResponse(text="late")):
            yield event

    async with runtime(store, tmp_path, ScriptedModel()) as rt:
        sid = await _create_and_edit(rt)
        (create, _, _), _ = await _changes(store, sid)
        rt.model.push(held)
        await rt.core.start_turn(sid, client_request_id="busy", inputs=[TextInput(text="x")])
        await rt.model.wait_for_requests(4, timeout=10)
        with pytest.raises(SessionActive):
            await rt.core.apply_file_changes(sid, [create], ChangeDirection.UNDO)
        release.set()
