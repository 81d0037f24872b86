"""Issue 5 end to end: through `openwork serve`, the model reads and edits a file and runs a
command inside the bubblewrap sandbox (tools.md §7, permissions-sandbox.md §1–§3)."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply, ToolCallSpec
from tests.support.daemon import run_turn_and_wait, start_daemon


async def test_the_model_edits_a_file_and_runs_a_command_in_the_sandbox(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text("print('hello')\n")
    fake_provider.push(
        Reply(tool_calls=(ToolCallSpec("c1", "read", {"path": "app.py"}),)),
        Reply(
            tool_calls=(
                ToolCallSpec(
                    "c2", "edit", {"filePath": "app.py", "oldString": "hello", "newString": "world"}
                ),
            )
        ),
        Reply(
            tool_calls=(
                ToolCallSpec("c3", "bash", {"command": "python3 app.py > out.txt && cat out.txt"}),
            )
        ),
        Reply(text="Edited and ran it."),
    )
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=database_url, env=provider_env(fake_provider)
    )
    try:
        async with daemon.client() as client:
            session = await client.post("/v1/sessions", json={"workspace": str(workspace)})
            sid = session.json()["session_id"]
            snapshot = (await client.get(f"/v1/sessions/{sid}")).json()["snapshot"]
            assert snapshot["sandbox"] == {"state": "available", "reason": None}
            turn_id, updates = await run_turn_and_wait(client, sid, "change the greeting", "r1")
            turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
            assert (turn["status"], turn["model_calls"]) == ("completed", 4)
            finished = [u["update"] for u in updates if u["update"]["type"] == "tool_call_finished"]  # type: ignore[index]
            assert (workspace / "app.py").read_text() == "print('world')\n"
            change_id = finished[1]["artifacts"][0]["changeId"]  # type: ignore[index]
            undo = await client.post(
                f"/v1/sessions/{sid}/file-changes/undo", json={"change_ids": [change_id]}
            )
            assert undo.json() == {
                "changes": [{"change_id": change_id, "path": "app.py", "undone": True}]
            }
            assert (workspace / "app.py").read_text() == "print('hello')\n"
            again = await client.post(
                f"/v1/sessions/{sid}/file-changes/undo", json={"change_ids": [change_id]}
            )
            assert (again.status_code, again.json()["error"]["code"]) == (
                409,
                "change_state_mismatch",
            )
            redo = await client.post(
                f"/v1/sessions/{sid}/file-changes/reapply", json={"change_ids": [change_id]}
            )
            assert redo.status_code == 200
    finally:
        assert await daemon.stop() == 0
    assert (workspace / "app.py").read_text() == "print('world')\n"
    assert (workspace / "out.txt").read_text() == "world\n"
    read, edit, bash = finished
    assert (read["status"], edit["status"], bash["status"]) == ("succeeded",) * 3  # type: ignore[index]
    assert edit["output"] == "Edited app.py:1 (+1 -1)"  # type: ignore[index]
    (artifact,) = edit["artifacts"]  # type: ignore[index]
    assert (artifact["type"], artifact["path"], artifact["kind"]) == (
        "file_change",
        "app.py",
        "modified",
    )
    assert artifact["undone"] is False
    assert "world" in bash["output"]  # type: ignore[index]
    assert "[exit 0;" in bash["output"]  # type: ignore[index]
    policy = [
        m["content"]
        for m in fake_provider.bodies[0]["messages"]  # type: ignore[union-attr]
        if m["role"] == "user" and str(m["content"]).startswith("<sandbox_policy>")
    ]
    assert (
        "bash: runs in the sandbox and can write the workspace and temporary directories."
        in str(policy[0])
    )
    assert fake_provider.violations == []
