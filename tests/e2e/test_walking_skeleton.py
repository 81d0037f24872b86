"""One real turn end to end: `openwork serve` as a subprocess, PostgreSQL, the official openai
SDK over loopback to a fake provider (issue 2; session-runtime.md §4, §10; daemon-api.md)."""

from __future__ import annotations

import asyncio
import signal
import stat
from pathlib import Path

import httpx
import orjson

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Gate, Held, Reply, ToolCallSpec
from tests.support.contract import contract_client
from tests.support.daemon import TOKEN, run_turn_and_wait, start_daemon, start_turn


async def _session(client: httpx.AsyncClient, workspace: Path) -> str:
    response = await client.post("/v1/sessions", json={"workspace": str(workspace)})
    assert response.status_code == 201, response.text
    session_id = response.json()["session_id"]
    assert isinstance(session_id, str)
    return session_id


async def test_a_turn_that_reads_a_file_then_answers_takes_two_model_calls(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """§4: the second request carries the assistant tool call followed by its result."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "README.md").write_text("# Project X\n")
    fake_provider.push(
        Reply(tool_calls=(ToolCallSpec("call_1", "read", {"path": "README.md"}),)),
        Reply(text="It is Project X."),
    )
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=database_url, env=provider_env(fake_provider)
    )
    try:
        async with daemon.client() as client:
            sid = await _session(client, workspace)
            turn_id, updates = await run_turn_and_wait(client, sid, "what is this?", "req-1")
            turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
            contract = ("turn_id", "status", "error_code", "message", "final_text", "model_calls")
            assert {k: turn[k] for k in contract} == {
                "turn_id": turn_id,
                "status": "completed",
                "error_code": None,
                "message": None,
                "final_text": "It is Project X.",
                "model_calls": 2,
            }
            # issue 16: timing and usage; issue 24: the turn's warnings; issue 26: its model
            added = {"started_at", "finished_at", "usage", "warnings", "model"}
            assert set(turn) - set(contract) == added
            kinds = [u["update"]["type"] for u in updates]  # type: ignore[index]
            assert kinds[0] == "turn_started"
            assert kinds[-1] == "turn_finished"
            assert "tool_call_started" in kinds
            assert kinds.index("tool_call_finished") < len(kinds) - 1
            messages = (await client.get(f"/v1/sessions/{sid}/messages")).json()["messages"]
            assert [(m["role"], m["kind"]) for m in messages] == [
                ("user", "normal"),
                ("user", "world_state"),
                ("user", "world_state"),
                ("assistant", "normal"),
                ("tool", "normal"),
                ("assistant", "normal"),
            ]
            assert [m["sequence"] for m in messages] == [1, 2, 3, 4, 5, 6]
            context = (await client.get(f"/v1/sessions/{sid}/context")).json()
            assert set(context) == {
                "system",
                "conversation",
                "provenance",
                "tools",
                "budget",
                "limits",
                "auto_compact_percent",
                "projection",
                "usage",  # issue 14 point 5
                "mcp",  # issue 27
            }
            assert context["mcp"] == {"tokens": 0, "servers": []}  # no MCP server configured
            assert [p["sequence"] for p in context["provenance"]] == [1, 2, 3, 4, 5, 6]
            assert context["system"][0]["key"] == "core/agent-system"
    finally:
        assert await daemon.stop() == 0
    bodies = fake_provider.bodies
    assert len(bodies) == 2
    second = bodies[1]["messages"]
    assert isinstance(second, list)
    assistant, tool = second[-2], second[-1]
    assert assistant["role"] == "assistant"
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_1"]
    assert tool["role"] == "tool"
    assert tool["tool_call_id"] == "call_1"
    assert "# Project X" in str(tool["content"])
    assert second[0]["role"] == "system"
    assert "temperature" not in bodies[0]
    assert "top_p" not in bodies[0]
    assert fake_provider.violations == []


async def test_after_sigkill_during_a_turn_a_restart_marks_it_interrupted_and_the_session_goes_on(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """session-runtime.md §10: restart correction before serving; a new turn in the session runs."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    gate = Gate()
    fake_provider.push(Held(Reply(text="never delivered"), gate), Reply(text="Back again."))
    env = provider_env(fake_provider)
    daemon = await start_daemon(home=tmp_path / "home", database_url=database_url, env=env)
    async with daemon.client() as client:
        sid = await _session(client, workspace)
        turn_id = await start_turn(client, sid, "start something long", "req-killed")
        await fake_provider.wait_for_requests(1, timeout=15)
        running = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
        assert running["status"] == "running"
    assert await daemon.stop(signal.SIGKILL) == -signal.SIGKILL
    gate.release()

    daemon = await start_daemon(home=tmp_path / "home", database_url=database_url, env=env)
    try:
        async with daemon.client() as client:
            turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
            assert turn["status"] == "interrupted"
            assert turn["error_code"] == "process_restart"
            new_turn, _ = await run_turn_and_wait(client, sid, "again", "req-after")
            after = (await client.get(f"/v1/sessions/{sid}/turns/{new_turn}")).json()
            assert after["status"] == "completed"
            assert after["final_text"] == "Back again."
    finally:
        assert await daemon.stop() == 0
    assert fake_provider.violations == []


async def test_sigterm_cancels_the_running_turn_removes_daemon_json_and_exits_zero(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """daemon-api.md §1: the discovery file is ``OPENWORK_HOME/daemon.json`` (0600, in the 0700
    home); SIGTERM → active turns cancelled, discovery file removed, exit 0."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    gate = Gate()
    fake_provider.push(Held(Reply(text="late"), gate))
    home = tmp_path / "home"
    daemon = await start_daemon(
        home=home, database_url=database_url, env=provider_env(fake_provider)
    )
    discovery = home / "daemon.json"
    assert stat.S_IMODE(discovery.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert orjson.loads(discovery.read_bytes()).keys() == {"url", "token", "pid", "version"}
    async with daemon.client() as client:
        sid = await _session(client, workspace)
        turn_id = await start_turn(client, sid, "wait for it", "req-term")
        await fake_provider.wait_for_requests(1, timeout=15)
    try:
        assert await daemon.stop(signal.SIGTERM) == 0
    finally:
        gate.release()
    assert not discovery.exists()
    daemon = await start_daemon(
        home=home, database_url=database_url, env=provider_env(fake_provider)
    )
    try:
        async with daemon.client() as client:
            turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
            assert turn["status"] == "cancelled"
    finally:
        assert await daemon.stop() == 0


async def test_requests_without_the_token_from_other_hosts_or_origins_are_refused(
    tmp_path: Path, database_url: str
) -> None:
    """daemon-api.md §2: bearer token, loopback Host, Origin allow-list; health is open."""
    daemon = await start_daemon(home=tmp_path / "home", database_url=database_url)
    try:
        async with contract_client(base_url=daemon.url, timeout=10) as bare:
            health = await bare.get("/v1/health")
            assert health.json()["status"] == "ok"
            assert health.json()["database"] == "ok"
            unauthorized = await bare.get("/v1/sessions")
            assert (unauthorized.status_code, unauthorized.json()["error"]["code"]) == (
                401,
                "unauthorized",
            )
            auth = {"Authorization": f"Bearer {TOKEN}"}
            host = await bare.get("/v1/sessions", headers={**auth, "Host": "example.com"})
            assert (host.status_code, host.json()["error"]["code"]) == (403, "forbidden_host")
            origin = await bare.get(
                "/v1/sessions", headers={**auth, "Origin": "https://evil.example"}
            )
            assert (origin.status_code, origin.json()["error"]["code"]) == (403, "forbidden_origin")
            ok = await bare.get("/v1/sessions", headers=auth)
            assert ok.status_code == 200
            missing = await bare.get("/v1/sessions/nope", headers=auth)
            assert (missing.status_code, missing.json()["error"]["code"]) == (404, "not_found")
            invalid = await bare.post("/v1/sessions", headers=auth, json={"workspace": 3})
            assert (invalid.status_code, invalid.json()["error"]["code"]) == (
                422,
                "invalid_request",
            )
            bad_ws = await bare.post(
                "/v1/sessions", headers=auth, json={"workspace": str(tmp_path / "missing")}
            )
            assert (bad_ws.status_code, bad_ws.json()["error"]["code"]) == (
                400,
                "invalid_workspace",
            )
            holds_home = await bare.post(
                "/v1/sessions", headers=auth, json={"workspace": str(tmp_path)}
            )  # the daemon's home lies under tmp_path: containment refuses it
            assert (holds_home.status_code, holds_home.json()["error"]["code"]) == (
                400,
                "invalid_workspace",
            )
            project = tmp_path / "project"
            project.mkdir()
            sid = (
                await bare.post("/v1/sessions", headers=auth, json={"workspace": str(project)})
            ).json()["session_id"]
            no_provider = await bare.post(
                f"/v1/sessions/{sid}/turns",
                headers=auth,
                json={"client_request_id": "x", "input": [{"type": "text", "text": "hi"}]},
            )
            assert (no_provider.status_code, no_provider.json()["error"]["code"]) == (
                400,
                "no_provider",
            )
    finally:
        assert await daemon.stop() == 0


async def test_a_crash_while_a_tool_runs_leaves_an_interrupted_result_in_the_next_request(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """session-runtime.md §10, context-window.md §11 item 25: nothing is re-run; the persisted
    call without a result gets, in the request copy only, the fixed interrupted result."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake_provider.push(
        Reply(tool_calls=(ToolCallSpec("call_long", "bash", {"command": "sleep 60"}),)),
        Reply(text="Understood, it was interrupted."),
    )
    env = provider_env(fake_provider)
    daemon = await start_daemon(home=tmp_path / "home", database_url=database_url, env=env)
    async with daemon.client() as client:
        sid = await _session(client, workspace)
        ready = asyncio.Event()
        started = asyncio.Event()

        async def watch() -> None:
            from tests.support.daemon import events_until_turn_finished

            async for envelope in events_until_turn_finished(client, sid, ready):
                if envelope["update"]["type"] == "tool_call_started":  # type: ignore[index]
                    started.set()
                    return

        watcher = asyncio.get_running_loop().create_task(watch())
        async with asyncio.timeout(10):
            await ready.wait()
        await start_turn(client, sid, "run the long thing", "req-crash")
        async with asyncio.timeout(15):
            await started.wait()
        await watcher
    assert await daemon.stop(signal.SIGKILL) == -signal.SIGKILL
    daemon = await start_daemon(home=tmp_path / "home", database_url=database_url, env=env)
    try:
        async with daemon.client() as client:
            await run_turn_and_wait(client, sid, "what happened?", "req-next")
            messages = (await client.get(f"/v1/sessions/{sid}/messages")).json()["messages"]
            assert not any(m["role"] == "tool" for m in messages), "the database stays untouched"
    finally:
        assert await daemon.stop() == 0
    request = fake_provider.bodies[-1]["messages"]
    assert isinstance(request, list)
    calls = [i for i, m in enumerate(request) if m.get("tool_calls")]
    (index,) = calls
    synthesized = request[index + 1]
    assert synthesized["role"] == "tool"
    assert synthesized["tool_call_id"] == "call_long"
    assert (
        "Tool result unavailable: the previous turn ended before a durable result was recorded."
        in str(synthesized["content"])
    )
    assert fake_provider.violations == []


async def test_the_inspected_context_is_what_the_provider_receives_on_the_next_call(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """context-window.md §8, §11 item 18 (a gap in the original): over HTTP, the inspection's
    System part, Conversation and tools are the prefix of the very next provider request."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("remember the milk\n")
    fake_provider.push(
        Reply(tool_calls=(ToolCallSpec("call_r", "read", {"path": "notes.txt"}),)),
        Reply(text="Milk."),
        Reply(text="Still milk."),
    )
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=database_url, env=provider_env(fake_provider)
    )
    try:
        async with daemon.client() as client:
            sid = await _session(client, workspace)
            await run_turn_and_wait(client, sid, "what is in my notes?", "req-1")
            inspected = (await client.get(f"/v1/sessions/{sid}/context")).json()
            await run_turn_and_wait(client, sid, "and again?", "req-2")
    finally:
        assert await daemon.stop() == 0
    wire = fake_provider.bodies[-1]
    messages = wire["messages"]
    assert isinstance(messages, list)
    system, *conversation = messages
    assert system == {"role": "system", "content": inspected["system"][0]["content"]}
    assert len(conversation) > len(inspected["conversation"])
    for sent, seen in zip(conversation, inspected["conversation"], strict=False):
        assert sent["role"] == seen["role"]
        blocks = seen["content"]
        if seen["role"] == "tool":
            (result,) = blocks
            assert sent["tool_call_id"] == result["id"]
            assert sent["content"] == result["output"][0]["text"]
        elif seen["role"] == "assistant":
            calls = [b for b in blocks if b["type"] == "tool_call"]
            assert [c["id"] for c in sent.get("tool_calls") or []] == [c["id"] for c in calls]
        else:
            texts = "".join(b["text"] for b in blocks if b["type"] == "text")
            content = sent["content"]
            assert (
                content if isinstance(content, str) else "".join(p["text"] for p in content)
            ) == texts
    assert sorted(t["function"]["name"] for t in wire["tools"]) == sorted(  # type: ignore[union-attr]
        t["name"] for t in inspected["tools"]
    )
