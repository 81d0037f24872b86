"""Issue 27 "what it must show", the hard half, through a real ``openwork serve``: a timeout, a
cancel that reaches the server, progress, a server killed mid-session (the turn goes on, the
server comes back), ``tools/list_changed`` applied at the next turn boundary, a 1 MB result
capped and spilled."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from openwork_tools.results import RESULT_TEXT_LIMIT
from tests.e2e.test_mcp_tools import daemon_with
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply, ToolCallSpec
from tests.support.mcp_servers import (
    ROOT,
    HttpServer,
    everything_bin,
    everything_http,
    restart_everything,
)
from tests.support.mcp_turns import file_containing, new_session, servers, wait_ready, watching

LONG = "mcp__everything__trigger-long-running-operation"
CHANGING = ROOT / "tests" / "fixtures" / "mcp_servers" / "changing_tools.py"


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return workspace


@pytest.fixture
async def everything() -> AsyncIterator[HttpServer]:
    async with everything_http() as server:
        yield server


async def test_a_slow_call_times_out_after_its_progress_and_the_turn_goes_on(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider, everything: HttpServer
) -> None:
    """Issue 27 point 4: ``tool_timeout_seconds`` per call; progress notifications become
    ``tool_call_progress``; the timeout is an error result and the turn continues."""
    fake_provider.push(
        Reply(tool_calls=(ToolCallSpec("c1", LONG, {"duration": 60, "steps": 60}),)),
        Reply(text="it was too slow"),
    )
    configured = {"everything": {"url": everything.url, "tool_timeout_seconds": 3}}
    daemon = await daemon_with(tmp_path, database_url, fake_provider, configured)
    try:
        await wait_ready(daemon, "everything")
        async with daemon.client() as client:
            sid = await new_session(client, _workspace(tmp_path))
            async with watching(client, sid) as turn:
                await turn.start("run it", "r1")
                progress = await turn.next("tool_call_progress")
                finished = await turn.next("turn_finished")
    finally:
        assert await daemon.stop() == 0
    assert (progress["progress"]["kind"], progress["progress"]["message"]) == ("message", "1/60")
    (result,) = turn.of("tool_call_finished")
    assert result["status"] == "failed"
    assert "did not answer within 3 s" in result["output"]
    assert finished["outcome"] == {"status": "completed", "finalText": "it was too slow"}


async def test_cancelling_the_turn_sends_notifications_cancelled_to_the_server(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 27 point 4: cancel reaches the server — the SDK sends ``notifications/cancelled``
    for the request when the call's task is cancelled (verified here on the wire: every byte the
    daemon writes to the stdio server is copied to a file by ``tee``)."""
    wire = tmp_path / "to-server.jsonl"
    fake_provider.push(Reply(tool_calls=(ToolCallSpec("c1", LONG, {"duration": 60, "steps": 60}),)))
    configured = {
        "everything": {
            "command": "/bin/sh",
            "args": ["-c", f"tee -a {wire} | {everything_bin()} stdio"],
            "sandbox": False,
        }
    }
    daemon = await daemon_with(tmp_path, database_url, fake_provider, configured)
    try:
        await wait_ready(daemon, "everything")
        async with daemon.client() as client:
            sid = await new_session(client, _workspace(tmp_path))
            async with watching(client, sid) as turn:
                turn_id = await turn.start("run it", "r1")
                await turn.next("tool_call_progress")
                cancel = await client.post(f"/v1/sessions/{sid}/turns/{turn_id}/cancel")
                assert cancel.status_code == 202
                finished = await turn.next("turn_finished")
            sent = await file_containing(wire, "notifications/cancelled")
    finally:
        assert await daemon.stop() == 0
    assert finished["outcome"]["status"] == "cancelled"
    (result,) = turn.of("tool_call_finished")
    assert result["status"] == "cancelled"
    call = next(line for line in sent.splitlines() if '"tools/call"' in line)
    cancelled = next(line for line in sent.splitlines() if "notifications/cancelled" in line)
    request_id = call.split('"id":')[1].split(",")[0].strip()
    assert f'"requestId":{request_id}' in cancelled.replace(" ", "")


async def test_a_server_killed_mid_call_is_a_result_and_it_comes_back_for_the_next_turn(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider, everything: HttpServer
) -> None:
    """Issue 27 point 4 and "a hostile server can't take the daemon down": the HTTP server is
    killed while a call runs; the call's result says so, the turn goes on to its end; the server
    is started again and the daemon's client reconnects (back-off) and the next turn calls it."""
    fake_provider.push(
        Reply(tool_calls=(ToolCallSpec("c1", LONG, {"duration": 60, "steps": 60}),)),
        Reply(text="the server died"),
        Reply(tool_calls=(ToolCallSpec("c2", "mcp__everything__echo", {"message": "back"}),)),
        Reply(text="it is back"),
    )
    configured = {"everything": {"url": everything.url, "tool_timeout_seconds": 30}}
    daemon = await daemon_with(tmp_path, database_url, fake_provider, configured)
    server = everything
    try:
        await wait_ready(daemon, "everything")
        async with daemon.client() as client:
            sid = await new_session(client, _workspace(tmp_path))
            async with watching(client, sid) as turn:
                await turn.start("run it", "r1")
                await turn.next("tool_call_progress")
                server.kill()
                first = await turn.next("turn_finished")
            killed = turn.of("tool_call_finished")
            await daemon.logged_times("mcp.server_failed", 1, server="everything")
            server = await restart_everything(server)
            await wait_ready(daemon, "everything", times=2)
            assert (await servers(client))["everything"]["status"] == "ready"
            async with watching(client, sid) as turn:
                await turn.start("again", "r2")
                second = await turn.next("turn_finished")
            echoed = turn.of("tool_call_finished")
    finally:
        server.kill()
        assert await daemon.stop() == 0
    assert first["outcome"] == {"status": "completed", "finalText": "the server died"}
    assert killed[0]["status"] == "outcome_unknown"
    assert "whether it acted is unknown" in killed[0]["output"]
    assert second["outcome"]["status"] == "completed"
    assert echoed[0]["status"] == "succeeded" and "back" in echoed[0]["output"]


async def test_list_changed_is_applied_at_the_next_turn_boundary_and_named_as_the_cache_miss(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 27 point 3: the tool list changes during a turn (``tools/list_changed``); that turn
    keeps its Tool Surface (same bytes in its next request); the next turn has the new tool; the
    cache diagnostics of that submission name ``tool_surface_changed``."""
    fake_provider.push(
        Reply(
            tool_calls=(ToolCallSpec("c1", "mcp__changing__add_tool", {"name": "fresh"}),),
            input_tokens=4000,
            cached_tokens=0,
        ),
        Reply(text="added", input_tokens=4000, cached_tokens=3900),
        Reply(
            tool_calls=(ToolCallSpec("c2", "mcp__changing__fresh", {}),),
            input_tokens=4100,
            cached_tokens=0,
        ),
        Reply(text="it ran"),
    )
    configured = {
        "changing": {"command": sys.executable, "args": [str(CHANGING)], "approval": "never"}
    }
    daemon = await daemon_with(tmp_path, database_url, fake_provider, configured)
    try:
        await wait_ready(daemon, "changing")
        async with daemon.client() as client:
            sid = await new_session(client, _workspace(tmp_path))
            async with watching(client, sid) as turn:
                await turn.start("add a tool", "r1")
                await turn.next("turn_finished")
            await daemon.logged_times("mcp.tools_changed", 1, server="changing")
            async with watching(client, sid) as turn:
                await turn.start("use it", "r2")
                await turn.next("turn_finished")
            ran = turn.of("tool_call_finished")
    finally:
        assert await daemon.stop() == 0
    names = [[t["function"]["name"] for t in b["tools"]] for b in fake_provider.bodies]  # type: ignore[index]
    assert "mcp__changing__fresh" not in names[0] and names[0] == names[1]
    assert "mcp__changing__fresh" in names[2]
    assert ran[0]["status"] == "succeeded" and ran[0]["output"] == "fresh ran"
    causes = await _cache_miss_causes(database_url, sid)
    assert causes[2] == "tool_surface_changed"
    assert fake_provider.violations == []


async def _cache_miss_causes(database_url: str, session_id: str) -> list[str | None]:
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch(
            "SELECT cache_miss_cause FROM model_call_usage WHERE session_id = $1 "
            "ORDER BY created_at, model_call",
            session_id,
        )
    finally:
        await conn.close()
    return [r["cache_miss_cause"] for r in rows]


async def test_a_one_megabyte_result_is_capped_at_32000_bytes_and_spilled_whole(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider, everything: HttpServer
) -> None:
    """Issue 27 point 4: the same 32,000-byte cap and spill file as the built-in tools."""
    # 1,001,000 bytes, and as many in the call's JSON (nothing to escape): under the 1 MiB bound
    # of one tool call's arguments (issue 22 point 6), so the model's call itself goes through
    message = "".join(f"line {i:07d} " for i in range(77_000))
    fake_provider.push(
        Reply(
            tool_calls=(ToolCallSpec("c1", "mcp__everything__echo", {"message": message}),),
            chunk_chars=64 * 1024,
        ),
        Reply(text="long"),
    )
    configured = {"everything": {"url": everything.url}}
    daemon = await daemon_with(tmp_path, database_url, fake_provider, configured)
    try:
        await wait_ready(daemon, "everything")
        async with daemon.client() as client:
            sid = await new_session(client, _workspace(tmp_path))
            async with watching(client, sid) as turn:
                await turn.start("echo it", "r1")
                await turn.next("turn_finished")
    finally:
        assert await daemon.stop() == 0
    (result,) = turn.of("tool_call_finished")
    output = result["output"]
    assert result["status"] == "succeeded"
    assert len(output.encode()) <= RESULT_TEXT_LIMIT
    spill = Path(output.rsplit("Full output saved at ", 1)[1].split(" — ")[0])
    assert await asyncio.to_thread(spill.read_text) == f"Echo: {message}"
    sent = fake_provider.bodies[1]["messages"][-1]["content"]  # type: ignore[index]
    assert len(str(sent).encode()) <= RESULT_TEXT_LIMIT + 512
