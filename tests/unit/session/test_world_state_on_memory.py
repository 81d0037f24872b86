"""World State through the real turn loop on the in-memory storage (context-window.md §3, §11
items 1, 2, 22, 23; issue 23 point 6: runner behaviour needs no PostgreSQL): sampled before every
model call, persisted, appended as user messages. The replay after a restart is
``integration/session/test_world_state_runtime.py``."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

from openwork_chat_state.messages import Role, TextBlock
from openwork_core.context.world_state.project_instructions import (
    PROJECT_INSTRUCTIONS_INVALIDATION_NOTICE,
    PROJECT_INSTRUCTIONS_REPLACEMENT_NOTICE,
    PROJECT_INSTRUCTIONS_TAG,
)
from openwork_core.context.world_state.sandbox_policy import (
    SANDBOX_POLICY_TAG,
)
from openwork_core.context.world_state.user_project import (
    USER_PROJECT_CONTEXT_REPLACEMENT_NOTICE,
    USER_PROJECT_CONTEXT_TAG,
)
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse, scripted_events
from openwork_core.models.port import ModelEvent, ModelRequest
from openwork_core.storage.records import TurnStatus
from tests.support.memory_session import memory_session


def _user_texts(request: ModelRequest) -> list[str]:
    return [
        "".join(b.text for b in m.content if isinstance(b, TextBlock))
        for m in request.messages
        if m.role is Role.USER
    ]


def _new_user_texts(before: ModelRequest, after: ModelRequest) -> list[str]:
    return _user_texts(after)[len(_user_texts(before)) :]


def _read_then_answer() -> list[ScriptedResponse]:
    return [
        ScriptedResponse(tool_calls=(("c1", "list", {}),)),
        ScriptedResponse(text="done"),
    ]


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return workspace


async def test_world_state_reaches_the_model_as_user_messages_not_system_parts(
    tmp_path: Path,
) -> None:
    """§11 item 1 and 22: AGENTS.md is a World State user message; sections in fixed order."""
    model = ScriptedModel([ScriptedResponse(text="ok")])
    workspace = _workspace(tmp_path)
    async with memory_session(model, workspace) as session:
        (workspace / "AGENTS.md").write_text("Always run the tests.\n")
        await session.run_turn("hello")
    (request,) = model.requests
    system = [m for m in request.messages if m.role is Role.SYSTEM]
    assert len(system) == 1
    assert "Always run the tests." not in system[0].content[0].text  # type: ignore[union-attr]
    texts = _user_texts(request)
    assert texts[0] == "hello"
    assert [t.split("\n", 1)[0] for t in texts[1:]] == [
        USER_PROJECT_CONTEXT_TAG,
        PROJECT_INSTRUCTIONS_TAG,
        SANDBOX_POLICY_TAG,
    ]
    assert "Always run the tests." in texts[2]


async def test_an_unchanged_world_adds_nothing_to_the_next_model_call(
    tmp_path: Path,
) -> None:
    """§3: a section that has not changed sends no byte."""
    model = ScriptedModel(_read_then_answer())
    workspace = _workspace(tmp_path)
    async with memory_session(model, workspace) as session:
        await session.run_turn("look around")
    first, second = model.requests
    assert _new_user_texts(first, second) == []
    model.assert_invariants(check_prefix=True)


async def test_an_agents_md_edit_is_seen_by_the_next_model_call_in_the_same_turn(
    tmp_path: Path,
) -> None:
    """§11 item 23: an edit between two model calls → replacement notice + the new body."""
    workspace_box: list[Path] = []

    async def edit_then_call_a_tool(_request: ModelRequest) -> AsyncIterator[ModelEvent]:
        (workspace_box[0] / "AGENTS.md").write_text("Use tabs.\n")
        for event in scripted_events(ScriptedResponse(tool_calls=(("c1", "list", {}),))):
            yield event

    model = ScriptedModel([edit_then_call_a_tool, ScriptedResponse(text="done")])
    workspace = _workspace(tmp_path)
    async with memory_session(model, workspace) as session:
        workspace_box.append(workspace)
        (workspace / "AGENTS.md").write_text("Use spaces.\n")
        await session.run_turn("format the code")
    first, second = model.requests
    (added,) = _new_user_texts(first, second)
    assert added.startswith(
        PROJECT_INSTRUCTIONS_REPLACEMENT_NOTICE + "\n\n" + PROJECT_INSTRUCTIONS_TAG
    )
    assert "Use tabs." in added


async def test_deleting_agents_md_sends_the_invalidation_notice(
    tmp_path: Path,
) -> None:
    """§3 notice table: baseline present, section now absent → invalidation notice."""
    workspace_box: list[Path] = []

    async def delete_then_call_a_tool(_request: ModelRequest) -> AsyncIterator[ModelEvent]:
        (workspace_box[0] / "AGENTS.md").unlink()
        for event in scripted_events(ScriptedResponse(tool_calls=(("c1", "list", {}),))):
            yield event

    model = ScriptedModel([delete_then_call_a_tool, ScriptedResponse(text="done")])
    workspace = _workspace(tmp_path)
    async with memory_session(model, workspace) as session:
        workspace_box.append(workspace)
        (workspace / "AGENTS.md").write_text("Temporary rules.\n")
        await session.run_turn("go")
    first, second = model.requests
    layout, instructions = _new_user_texts(first, second)
    # the file also left the project layout: one message per changed section, in fixed order
    assert layout.startswith(USER_PROJECT_CONTEXT_REPLACEMENT_NOTICE + "\n\n")
    assert "AGENTS.md" not in layout
    assert instructions == PROJECT_INSTRUCTIONS_INVALIDATION_NOTICE


async def test_a_whitespace_only_agents_md_sends_nothing_through_a_whole_turn(
    tmp_path: Path,
) -> None:
    """§11 item 2 (a gap in the original): blank AGENTS.md → no section, no empty message."""
    model = ScriptedModel(_read_then_answer())
    workspace = _workspace(tmp_path)
    async with memory_session(model, workspace) as session:
        (workspace / "AGENTS.md").write_text("  \n\t\n")
        await session.run_turn("go")
    for request in model.requests:
        texts = _user_texts(request)
        assert not any(PROJECT_INSTRUCTIONS_TAG in t for t in texts)
        assert PROJECT_INSTRUCTIONS_INVALIDATION_NOTICE not in texts
        assert all(t.strip() for t in texts)


async def test_invalid_project_instructions_fail_before_the_model_and_leave_no_draft(
    tmp_path: Path,
) -> None:
    """§3 and §11 item 3: a symlinked AGENTS.md fails the turn with project_instruction_error."""
    model = ScriptedModel()
    workspace = _workspace(tmp_path)
    async with memory_session(model, workspace) as session:
        target = tmp_path / "elsewhere.md"
        target.write_text("rules")
        os.symlink(target, workspace / "AGENTS.md")
        turn_id, updates = await session.run_turn("go")
        turn = session.storage.turns[turn_id]
        assert turn.status is TurnStatus.FAILED
        assert turn.error_code == "project_instruction_error"
        snapshot = await session.handle.snapshot()
        assert snapshot.runtime.state == "terminal"
        assert not any(u.update.type == "text_delta" for u in updates)
    assert model.requests == []
