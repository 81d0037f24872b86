"""World State across a daemon restart (context-window.md §3, §11 item 24 at daemon level): every
section still in the Conversation comes back exactly once with its replacement notice, and the
next model call sends none."""

from __future__ import annotations

from pathlib import Path

from openwork_core.context.world_state.project_instructions import (
    PROJECT_INSTRUCTIONS_REPLACEMENT_NOTICE,
)
from openwork_core.context.world_state.sandbox_policy import SANDBOX_POLICY_REPLACEMENT_NOTICE
from openwork_core.context.world_state.user_project import USER_PROJECT_CONTEXT_REPLACEMENT_NOTICE
from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply, ToolCallSpec
from tests.support.daemon import run_turn_and_wait, start_daemon
from tests.support.wire import chat_user_texts


async def test_a_daemon_restart_re_sends_each_retained_section_once_with_its_notice(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("Prefer small commits.\n")
    fake_provider.push(
        Reply(text="first answer"),
        Reply(tool_calls=(ToolCallSpec("call_1", "list", {}),)),
        Reply(text="second answer"),
    )
    env = provider_env(fake_provider)
    home = tmp_path / "home"
    daemon = await start_daemon(home=home, database_url=database_url, env=env)
    try:
        async with daemon.client() as client:
            sid = (await client.post("/v1/sessions", json={"workspace": str(workspace)})).json()[
                "session_id"
            ]
            await run_turn_and_wait(client, sid, "one", "req-1")
    finally:
        assert await daemon.stop() == 0
    daemon = await start_daemon(home=home, database_url=database_url, env=env)
    try:
        async with daemon.client() as client:
            await run_turn_and_wait(client, sid, "two", "req-2")
    finally:
        assert await daemon.stop() == 0
    before, after_restart, next_call = fake_provider.bodies
    old = chat_user_texts(before)
    replayed = chat_user_texts(after_restart)[len(old) + 1 :]
    assert [t.split("\n\n", 1)[0] for t in replayed] == [
        USER_PROJECT_CONTEXT_REPLACEMENT_NOTICE,
        PROJECT_INSTRUCTIONS_REPLACEMENT_NOTICE,
        SANDBOX_POLICY_REPLACEMENT_NOTICE,
    ]
    assert "Prefer small commits." in replayed[1]
    assert chat_user_texts(next_call) == chat_user_texts(after_restart)
    assert fake_provider.violations == []
