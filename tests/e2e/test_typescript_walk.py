"""Issue 25 point 4, "what it must show": the developer's walk as an automated Node test. The
TypeScript client in clients/typescript (fetch, its own SSE reader, the generated types) runs
under Node against a real `openwork serve` (PostgreSQL, the scripted fake provider over loopback):
discover, create, stream a turn, approve a card, stream bash progress, cancel, reconnect without
loss or duplicates through a connection that breaks, list, rename, delete
(clients/typescript/test/walk.test.ts; its steps are scripted here in their order)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply, ToolCallSpec
from tests.support.daemon import start_daemon
from tests.support.postgres import PgCluster
from tests.support.typescript import built, node_test

pytestmark = pytest.mark.asyncio

LONG_TEXT = " ".join(f"Sentence {n} of a story told while the client was away." for n in range(12))
"""About 220 deltas: all of them stay in the 512-update replay buffer while the client is away."""


def _script() -> list[Reply]:
    def bash(call_id: str, command: str) -> Reply:
        return Reply(tool_calls=(ToolCallSpec(call_id, "bash", {"command": command}),))

    return [
        Reply(text="Hello from the fake provider."),  # stream a turn
        bash("call_clean", "echo removing; rm -rf build; echo removed"),  # approve, progress
        Reply(text="Removed the build folder."),
        bash("call_long", "echo started; sleep 60"),  # cancel (no model call after it)
        bash("call_again", "rm -rf build2"),  # reconnect: the card, then a long answer
        Reply(text=LONG_TEXT, chunk_chars=3),
    ]


async def test_the_developers_walk_runs_under_node_against_a_real_daemon(
    pg_cluster: PgCluster, fake_provider: FakeProvider, tmp_path: Path
) -> None:
    dist = await asyncio.to_thread(built)
    workspace = tmp_path / "project"
    workspace.mkdir()
    fake_provider.push(*_script())
    daemon = await start_daemon(
        home=tmp_path / "home",
        database_url=await pg_cluster.new_database(),
        env=provider_env(fake_provider),
    )
    try:
        done = await asyncio.to_thread(
            node_test,
            dist / "test" / "walk.test.js",
            {
                "OPENWORK_HOME": str(daemon.home),
                "WALK_WORKSPACE": str(workspace),
                "WALK_LONG_TEXT": LONG_TEXT,
            },
            180,
        )
    finally:
        assert await daemon.stop() == 0
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    counts = dict(re.findall(r"^# (tests|pass|fail|skipped|todo) (\d+)$", done.stdout, re.M))
    assert int(counts["tests"]) >= 8 and counts["pass"] == counts["tests"], report
    assert (counts["fail"], counts["skipped"], counts["todo"]) == ("0", "0", "0"), report
    assert fake_provider.remaining_steps == 0
    assert fake_provider.violations == []
    # the approved command's result reached the model before its answer
    assert "removing\\nremoved" in fake_provider.requests[2].raw.decode()
