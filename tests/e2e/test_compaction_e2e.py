"""Issue 7 item 10: through `openwork serve` with a small OPENWORK_MODEL_CONTEXT_WINDOW, a long
turn triggers threshold compaction, finishes, and the request after it has the documented shape
(compaction.md §3.1, §5; context-window.md §7.2)."""

from __future__ import annotations

import math
from pathlib import Path

from openwork_core.session.compaction.compacted_view import SUMMARY_PREFIX
from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply, ToolCallSpec
from tests.support.daemon import run_turn_and_wait, start_daemon
from tests.support.wire import chat_user_texts
from tests.unit.compaction.compaction_support import valid_summary


async def test_a_long_turn_compacts_at_the_threshold_and_finishes(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "big.txt").write_text(("y" * 79 + "\n") * 300)
    home = tmp_path / "home"
    daemon = await start_daemon(
        home=home, database_url=database_url, env=provider_env(fake_provider)
    )
    try:
        async with daemon.client() as client:
            sid = (await client.post("/v1/sessions", json={"workspace": str(workspace)})).json()[
                "session_id"
            ]
            base = (await client.get(f"/v1/sessions/{sid}/context")).json()["budget"][
                "estimated_input_tokens"
            ]
    finally:
        assert await daemon.stop() == 0
    output = 1_000
    window = math.ceil((base + 600 + output + 1_500) / 0.85) + output
    env = provider_env(
        fake_provider,
        OPENWORK_MODEL_CONTEXT_WINDOW=str(window),
        OPENWORK_MODEL_MAX_OUTPUT_TOKENS=str(output),
    )
    fake_provider.push(
        Reply(tool_calls=(ToolCallSpec("c1", "read", {"path": "big.txt"}),)),
        Reply(text=valid_summary(), chunk_chars=400),
        Reply(text="All summarised."),
    )
    daemon = await start_daemon(home=home, database_url=database_url, env=env)
    try:
        async with daemon.client() as client:
            turn_id, updates = await run_turn_and_wait(client, sid, "read the big file", "r1")
            turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
            assert (turn["status"], turn["final_text"], turn["model_calls"]) == (
                "completed",
                "All summarised.",
                2,
            )
            phases = [u["update"].get("phase") for u in updates]  # type: ignore[union-attr]
            assert "compacting" in phases
            context = (await client.get(f"/v1/sessions/{sid}/context")).json()
            assert [p.get("synthetic") for p in context["provenance"][:3]] == [
                "last_user_request_replay",
                "compaction_summary",
                "system_reminder",
            ]
    finally:
        assert await daemon.stop() == 0
    first, summary, after = fake_provider.bodies
    assert "tools" not in summary or not summary["tools"]
    assert summary["messages"][-1]["content"].startswith("Create a durable continuation summary")  # type: ignore[index]
    texts = chat_user_texts(after)
    assert texts[0] == "read the big file"
    assert texts[1].startswith(SUMMARY_PREFIX)
    assert texts[2].startswith('<system_reminder format_version="1">')
    assert texts[3].startswith('<user_project_context format_version="1">')
    assert texts[4].startswith("<sandbox_policy>")
    assert first["messages"][0] == after["messages"][0], "the System Context is byte-stable"
    assert first["tools"] == after["tools"], "the tool definitions are byte-stable"
    assert fake_provider.violations == []
