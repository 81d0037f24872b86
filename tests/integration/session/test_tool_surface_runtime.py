"""The Tool Surface in real turns: update_plan, the approval gate with cards, the sandbox, mode
changes (context-window.md §5; update-plan.md §4; permissions-sandbox.md §1, §5; session-runtime.md §5)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from openwork_chat_state.messages import TextBlock, ToolResultBlock, ToolResultState
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.plan.model import steps_from_json
from openwork_core.session.approval import PermissionDecision, PermissionRequest
from openwork_core.session.errors import PermissionNotPending, TurnNotActive
from openwork_core.session.input import TextInput
from openwork_core.session.update_streams import Subscription
from openwork_core.session.updates import SessionUpdateEnvelope
from openwork_core.storage.codec import decode_message
from openwork_core.storage.postgres import history as history_rows
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import TurnStatus
from openwork_tools.modes import SandboxMode, SandboxStatus
from openwork_tools.sandbox.probe import probe_sandbox
from tests.support import store_rows
from tests.support.runtime import Runtime, runtime


@pytest.fixture
async def sandbox() -> SandboxStatus:
    """The real bubblewrap self-check; these tests need it (the project installs bubblewrap)."""
    status = await probe_sandbox()
    assert status.available, f"bubblewrap sandbox unavailable: {status.reason}"
    return status


async def _results(store: PostgresStore, sid: str) -> list[ToolResultBlock]:
    return [
        b
        for m in await store_rows.session_messages(store.pool, sid)
        for b in decode_message(m).tool_results
    ]


def _text(block: ToolResultBlock) -> str:
    return "".join(b.text for b in block.output if isinstance(b, TextBlock))


async def _until(subscription: Subscription, kind: str) -> SessionUpdateEnvelope:
    async with asyncio.timeout(15):
        while True:
            envelope = await subscription.queue.get()
            if envelope.update.type == kind:
                return envelope


async def test_update_plan_commits_the_plan_with_its_result_and_then_emits_plan_updated(
    store: PostgresStore, tmp_path: Path
) -> None:
    """update-plan.md §4, §5, §7: one transaction, event after commit, unfinished count."""
    plan = {
        "explanation": "two steps",
        "plan": [
            {"step": "read schema", "status": "completed"},
            {"step": "  add migration ", "status": "in_progress"},
        ],
    }
    bad = {"plan": [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]}
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=(("p1", "update_plan", plan),)),
            ScriptedResponse(tool_calls=(("p2", "update_plan", bad),)),
            ScriptedResponse(text="working on it"),
        ]
    )
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        turn_id, updates = await rt.run_turn(sid, "plan it")
        kinds = [u.update.type for u in updates]
        assert kinds.count("plan_updated") == 1
        first_plan_event = kinds.index("plan_updated")
        assert kinds[first_plan_event + 1] == "tool_call_finished"
        snapshot = await rt.core.snapshot(sid)
        assert snapshot.runtime.state == "terminal"
        assert snapshot.runtime.plan is not None
        assert snapshot.runtime.plan.steps[1].step == "  add migration "
    async with store.pool.acquire() as conn:
        stored = await history_rows.fetch_latest_plan(conn, sid)
    assert stored is not None and stored.turn_id == turn_id
    assert [s.step for s in steps_from_json(stored.steps_json)] == [
        "read schema",
        "  add migration ",
    ]
    results = await _results(store, sid)
    assert [(_text(r), r.state) for r in results] == [
        ("Plan updated", ToolResultState.SUCCESS),
        (
            "at most one step may be in_progress, but steps 0 and 1 are both in_progress",
            ToolResultState.ERROR,
        ),
    ]
    async with store.pool.acquire() as conn:
        assert (
            await conn.fetchval(
                "SELECT plan_unfinished_step_count FROM turns WHERE id = $1", turn_id
            )
            == 1
        )


async def test_a_protected_write_is_denied_by_rule_and_the_turn_goes_on(
    store: PostgresStore, tmp_path: Path
) -> None:
    """permissions-sandbox.md §5 step 1: hard-protected target → denied result, no card."""
    model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=(("w1", "write", {"path": ".git/hooks/pre-commit", "content": "evil"}),)
            ),
            ScriptedResponse(text="ok, I will not"),
        ]
    )
    async with runtime(store, tmp_path, model) as rt:
        (rt.workspace / ".git" / "hooks").mkdir(parents=True)
        sid = await rt.new_session()
        turn_id, updates = await rt.run_turn(sid, "install a hook")
        assert (await rt.core.turn_view(sid, turn_id)).status is TurnStatus.COMPLETED
        assert "permission_requested" not in [u.update.type for u in updates]
        assert not (rt.workspace / ".git" / "hooks" / "pre-commit").exists()
    (denied,) = await _results(store, sid)
    assert denied.state is ToolResultState.DENIED
    assert "is protected and cannot be written in any mode; do not retry" in _text(denied)


async def _dangerous_turn(
    rt: Runtime, decision: PermissionDecision | None
) -> tuple[str, str, Subscription]:
    sid = await rt.new_session()
    _, subscription = await rt.core.subscribe(sid, None)
    accepted = await rt.core.start_turn(
        sid, client_request_id="r", inputs=[TextInput(text="clean")]
    )
    requested = await _until(subscription, "permission_requested")
    request = requested.update.request  # type: ignore[union-attr]
    assert isinstance(request, PermissionRequest)
    assert request.card.danger is not None
    assert request.card.danger.key == "rm_recursive_or_force"
    snapshot = await rt.core.snapshot(sid)
    assert snapshot.runtime.state == "running"
    assert snapshot.runtime.phase == "waiting_permission"  # type: ignore[union-attr]
    tool_call_id = request.tool_call_id
    with pytest.raises(PermissionNotPending):
        await rt.core.resolve_permission(sid, accepted.turn_id, "tc_other", PermissionDecision.DENY)
    if decision is None:
        await rt.core.cancel_turn(sid, accepted.turn_id)
    else:
        await rt.core.resolve_permission(sid, accepted.turn_id, tool_call_id, decision)
    await _until(subscription, "turn_finished")
    return sid, accepted.turn_id, subscription


async def test_a_dangerous_command_asks_and_allow_once_runs_it_in_the_sandbox(
    store: PostgresStore, tmp_path: Path, sandbox: SandboxStatus
) -> None:
    """§5 step 3: auto mode + dangerous bash → card; allow_once runs this call only."""
    model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=(("b1", "bash", {"command": "rm -rf build && echo gone"}),)
            ),
            ScriptedResponse(text="cleaned"),
        ]
    )
    async with runtime(store, tmp_path, model, sandbox=sandbox) as rt:
        (rt.workspace / "build").mkdir()
        sid, turn_id, subscription = await _dangerous_turn(rt, PermissionDecision.ALLOW_ONCE)
        subscription.close()
        assert (await rt.core.turn_view(sid, turn_id)).status is TurnStatus.COMPLETED
        assert not (rt.workspace / "build").exists()
    (result,) = await _results(store, sid)
    assert result.state is ToolResultState.SUCCESS
    assert "gone" in _text(result)


async def test_deny_ends_the_turn_permission_denied_without_running_the_tool(
    store: PostgresStore, tmp_path: Path, sandbox: SandboxStatus
) -> None:
    """§5: deny → denied result, the turn fails permission_denied, nothing ran."""
    model = ScriptedModel(
        [ScriptedResponse(tool_calls=(("b1", "bash", {"command": "rm -rf build"}),))]
    )
    async with runtime(store, tmp_path, model, sandbox=sandbox) as rt:
        (rt.workspace / "build").mkdir()
        sid, turn_id, subscription = await _dangerous_turn(rt, PermissionDecision.DENY)
        subscription.close()
        view = await rt.core.turn_view(sid, turn_id)
        assert (view.status, view.error_code) == (TurnStatus.FAILED, "permission_denied")
        assert (rt.workspace / "build").is_dir()
        with pytest.raises(TurnNotActive):
            await rt.core.resolve_permission(sid, turn_id, "x", PermissionDecision.DENY)
    (result,) = await _results(store, sid)
    assert result.state is ToolResultState.DENIED


async def test_cancel_while_an_approval_is_pending_cancels_the_turn(
    store: PostgresStore, tmp_path: Path, sandbox: SandboxStatus
) -> None:
    """session-runtime.md §2, §13: cancel during waiting_permission (untested in the original)."""
    model = ScriptedModel(
        [ScriptedResponse(tool_calls=(("b1", "bash", {"command": "rm -rf build"}),))]
    )
    async with runtime(store, tmp_path, model, sandbox=sandbox) as rt:
        (rt.workspace / "build").mkdir()
        sid, turn_id, subscription = await _dangerous_turn(rt, None)
        subscription.close()
        assert (await rt.core.turn_view(sid, turn_id)).status is TurnStatus.CANCELLED
        assert (rt.workspace / "build").is_dir()
    (result,) = await _results(store, sid)
    assert result.state is ToolResultState.INTERRUPTED


async def test_cancel_while_a_tool_runs_returns_its_partial_output(
    store: PostgresStore, tmp_path: Path, sandbox: SandboxStatus
) -> None:
    """tools.md §5: cancel kills the process group; the result keeps the partial output."""
    model = ScriptedModel(
        [ScriptedResponse(tool_calls=(("b1", "bash", {"command": "echo started; sleep 60"}),))]
    )
    async with runtime(store, tmp_path, model, sandbox=sandbox) as rt:
        sid = await rt.new_session()
        _, subscription = await rt.core.subscribe(sid, None)
        accepted = await rt.core.start_turn(
            sid, client_request_id="r", inputs=[TextInput(text="x")]
        )
        await _until(subscription, "tool_call_started")
        await rt.core.cancel_turn(sid, accepted.turn_id)
        await _until(subscription, "turn_finished")
        subscription.close()
        assert (await rt.core.turn_view(sid, accepted.turn_id)).status is TurnStatus.CANCELLED
    (result,) = await _results(store, sid)
    assert result.state is ToolResultState.INTERRUPTED


async def test_accept_edits_mode_lets_file_tools_write_but_not_bash(
    store: PostgresStore, tmp_path: Path, sandbox: SandboxStatus
) -> None:
    """permissions-sandbox.md §1: the mode is effective from the next tool call and never
    changes the tool surface; bash is kernel-denied with the marker naming the mode."""
    model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=(
                    ("w1", "write", {"path": "a.txt", "content": "file tool\n"}),
                    ("b1", "bash", {"command": "echo bash > b.txt"}),
                )
            ),
            ScriptedResponse(text="done"),
        ]
    )
    async with runtime(store, tmp_path, model, sandbox=sandbox) as rt:
        sid = await rt.new_session()
        tools_before = (await rt.core.inspect_context_window(sid)).tools
        await rt.core.set_permission_mode(sid, SandboxMode.ACCEPT_EDITS)
        assert (await rt.core.inspect_context_window(sid)).tools == tools_before
        await rt.run_turn(sid, "write both")
        assert (rt.workspace / "a.txt").read_text() == "file tool\n"
        assert not (rt.workspace / "b.txt").exists()
        assert (await store.get_session(sid)).sandbox_mode is SandboxMode.ACCEPT_EDITS
    write, bash = await _results(store, sid)
    assert write.state is ToolResultState.SUCCESS
    assert "[sandbox: file access denied under accept-edits mode]" in _text(bash)
    policy = [
        t
        for m in model.requests[0].messages
        for t in [m.content[0]]
        if isinstance(t, TextBlock) and t.text.startswith("<sandbox_policy>")
    ]
    assert "mode: accept-edits" in policy[0].text


async def test_an_escalation_shows_a_card_and_allow_once_widens_only_that_call(
    store: PostgresStore, tmp_path: Path, sandbox: SandboxStatus
) -> None:
    """permissions-sandbox.md §5 step 2: sandboxPermissions + justification → a card listing the
    paths; allow_once runs this call with the grant; the next call is back under the mode."""
    box: list[Path] = []

    def escalated(command: str) -> dict[str, object]:
        return {
            "command": command,
            "sandboxPermissions": {
                "paths": [{"path": str(box[0]), "access": "write", "scope": "subtree"}]
            },
            "justification": "The build writes its report into the workspace.",
        }

    model = ScriptedModel()
    async with runtime(store, tmp_path, model, sandbox=sandbox) as rt:
        box.append(rt.workspace.resolve())
        model.push(
            ScriptedResponse(tool_calls=(("b1", "bash", escalated("echo ok > report.txt")),)),
            ScriptedResponse(tool_calls=(("b2", "bash", {"command": "echo no > second.txt"}),)),
            ScriptedResponse(text="done"),
        )
        sid = await rt.new_session(SandboxMode.ACCEPT_EDITS)
        _, subscription = await rt.core.subscribe(sid, None)
        accepted = await rt.core.start_turn(
            sid, client_request_id="r", inputs=[TextInput(text="build")]
        )
        requested = await _until(subscription, "permission_requested")
        request = requested.update.request  # type: ignore[union-attr]
        assert isinstance(request, PermissionRequest)
        card = request.card
        assert card.justification == "The build writes its report into the workspace."
        assert card.paths[0].access == "write"
        assert card.paths[0].in_workspace is True
        await rt.core.resolve_permission(
            sid, accepted.turn_id, request.tool_call_id, PermissionDecision.ALLOW_ONCE
        )
        await _until(subscription, "turn_finished")
        subscription.close()
        assert (rt.workspace / "report.txt").read_text() == "ok\n"
        assert not (rt.workspace / "second.txt").exists()
    first, second = await _results(store, sid)
    assert first.state is ToolResultState.SUCCESS
    assert "[sandbox: file access denied under accept-edits mode]" in _text(second)


async def _card_then(rt: Runtime, sid: str, mode_meanwhile: SandboxMode) -> PermissionRequest:
    """Start a turn, wait for its card, switch the session to ``mode_meanwhile`` while the card
    waits, then allow it; the turn's end awaited."""
    _, subscription = await rt.core.subscribe(sid, None)
    accepted = await rt.core.start_turn(sid, client_request_id="r", inputs=[TextInput(text="go")])
    requested = await _until(subscription, "permission_requested")
    request = requested.update.request  # type: ignore[union-attr]
    assert isinstance(request, PermissionRequest)
    await rt.core.set_permission_mode(sid, mode_meanwhile)
    await rt.core.resolve_permission(
        sid, accepted.turn_id, request.tool_call_id, PermissionDecision.ALLOW_ONCE
    )
    await _until(subscription, "turn_finished")
    subscription.close()
    return request


async def test_a_call_carded_in_auto_runs_in_auto_though_the_mode_narrowed_while_it_waited(
    store: PostgresStore, tmp_path: Path, sandbox: SandboxStatus
) -> None:
    """permissions-sandbox.md §1 (a mode change is effective from the next tool call) and §5
    (the card shows the mode): the user who allows a card allows what it showed — the waiting
    call runs in ``auto``; the call after it is under ``accept-edits``."""
    model = ScriptedModel(
        [
            ScriptedResponse(
                tool_calls=(("b1", "bash", {"command": "rm -rf build && echo gone > gone.txt"}),)
            ),
            ScriptedResponse(tool_calls=(("b2", "bash", {"command": "echo no > next.txt"}),)),
            ScriptedResponse(text="done"),
        ]
    )
    async with runtime(store, tmp_path, model, sandbox=sandbox) as rt:
        (rt.workspace / "build").mkdir()
        sid = await rt.new_session()
        request = await _card_then(rt, sid, SandboxMode.ACCEPT_EDITS)
        assert request.card.mode is SandboxMode.AUTO
        assert not (rt.workspace / "build").exists()
        assert (rt.workspace / "gone.txt").read_text() == "gone\n"
        assert not (rt.workspace / "next.txt").exists()
    first, second = await _results(store, sid)
    assert first.state is ToolResultState.SUCCESS
    assert "[sandbox: file access denied under accept-edits mode]" in _text(second)


async def test_a_call_carded_in_accept_edits_gets_only_its_grant_though_the_mode_widened(
    store: PostgresStore, tmp_path: Path, sandbox: SandboxStatus
) -> None:
    """The same rule the other way (permissions-sandbox.md §1, §5 step 2): an escalation carded
    under ``accept-edits`` with a write grant on ``out/`` runs with that grant only, though the
    user switched the session to ``auto`` while the card waited: the workspace outside ``out/``
    stays unwritable for that call; the call after it runs under ``auto``."""
    model = ScriptedModel()
    async with runtime(store, tmp_path, model, sandbox=sandbox) as rt:
        out = rt.workspace.resolve() / "out"
        out.mkdir()
        command = "echo in > out/in.txt; echo outside > outside.txt"
        escalated = {
            "command": command,
            "sandboxPermissions": {
                "paths": [{"path": str(out), "access": "write", "scope": "subtree"}]
            },
            "justification": "The build writes its report into out/.",
        }
        model.push(
            ScriptedResponse(tool_calls=(("b1", "bash", escalated),)),
            ScriptedResponse(tool_calls=(("b2", "bash", {"command": "echo yes > next.txt"}),)),
            ScriptedResponse(text="done"),
        )
        sid = await rt.new_session(SandboxMode.ACCEPT_EDITS)
        request = await _card_then(rt, sid, SandboxMode.AUTO)
        assert request.card.mode is SandboxMode.ACCEPT_EDITS
        assert (out / "in.txt").read_text() == "in\n"
        assert not (rt.workspace / "outside.txt").exists()
        assert (rt.workspace / "next.txt").read_text() == "yes\n"
    first, second = await _results(store, sid)
    assert "[sandbox: file access denied under accept-edits mode]" in _text(first)
    assert second.state is ToolResultState.SUCCESS
