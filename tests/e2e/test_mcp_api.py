"""Issue 27 points 1, 2 and 5 end to end: servers through ``/v1/mcp/servers`` and ``openwork
mcp``, never a secret in PostgreSQL; and the reliability promises — untrusted MCP output, a
hostile server cannot take the daemon down, a sandboxed stdio server has no network."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import asyncpg

from tests.e2e.test_mcp_tools import daemon_with
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply, ToolCallSpec
from tests.support.cli import run_cli
from tests.support.mcp_servers import ROOT, python_server
from tests.support.mcp_turns import new_session, servers, wait_ready, watching

HOSTILE = ROOT / "tests" / "fixtures" / "mcp_servers" / "hostile.py"


async def test_servers_are_put_listed_tested_and_removed_and_no_secret_reaches_postgresql(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 27 points 1 and 5: the API and the CLI; the stored row names the secret but holds
    no value, which sits in the 0600 key file; a config-file server is not the API's."""
    configured = {"time": {"command": python_server("mcp-server-time")}}
    daemon = await daemon_with(tmp_path, database_url, fake_provider, configured)
    home = tmp_path / "home"
    try:
        await wait_ready(daemon, "time")
        async with daemon.client() as client:
            put = await client.put(
                "/v1/mcp/servers/git",
                json={
                    "command": python_server("mcp-server-git"),
                    "env": {"GIT_TOKEN": "s3cret-value"},
                    "approval": "always",
                },
            )
            assert put.status_code == 200, put.text
            assert put.json()["config"]["env"] == ["GIT_TOKEN"]
            assert "s3cret-value" not in put.text
            await wait_ready(daemon, "git")
            listed = await servers(client)
            assert {n: (s["status"], s["source"]) for n, s in listed.items()} == {
                "git": ("ready", "api"),
                "time": ("ready", "config"),
            }
            refused = await client.put("/v1/mcp/servers/time", json={"command": "other"})
            assert (refused.status_code, refused.json()["error"]["code"]) == (
                409,
                "mcp_server_in_config_file",
            )
            bad = await client.put("/v1/mcp/servers/a%2Fb", json={"command": "x"})
            assert bad.status_code in (404, 422)
        listing = await run_cli("mcp", "list", home=home)
        tested = await run_cli("mcp", "test", "time", home=home)
        added = await run_cli(
            "mcp", "add", "clock", "--command", python_server("mcp-server-time"), home=home
        )
        await wait_ready(daemon, "clock")
        removed = await run_cli("mcp", "remove", "git", home=home)
        failing = await run_cli("mcp", "test", "nope", home=home)
        async with daemon.client() as client:
            after = await servers(client)
        stored = await _stored(database_url)
    finally:
        assert await daemon.stop() == 0
    assert listing.code == 0, listing.stderr
    assert listing.stdout.splitlines()[0].split("\t")[:4] == [
        "name",
        "status",
        "transport",
        "tools",
    ]
    assert any(line.startswith("git\tready\tstdio\t12\t") for line in listing.stdout.splitlines())
    assert tested.code == 0 and "mcp__time__get_current_time\t" in tested.stdout, tested.stderr
    assert added.code == 0 and removed.code == 0, added.stderr + removed.stderr
    assert failing.code != 0
    assert sorted(after) == ["clock", "time"]
    assert stored == {"clock": stored["clock"]} and "s3cret" not in json.dumps(stored)
    secrets = home / "run" / "mcp-secrets.json"
    assert secrets.stat().st_mode & 0o777 == 0o600
    assert "git" not in json.loads(secrets.read_text())  # removed with its server


async def _stored(database_url: str) -> dict[str, object]:
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch("SELECT name, config::text AS config FROM mcp_servers")
    finally:
        await conn.close()
    return {r["name"]: json.loads(r["config"]) for r in rows}


async def test_a_hostile_server_cannot_take_the_daemon_down(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """docs/reliability.md "Untrusted MCP servers": hostile names and schemas are normalised (the
    fake checks the providers' rules); garbage lines, a 10,000-notification flood, a 20 MB line
    and a crash during a call are each a result and the turn goes on; a server that never
    answers initialize is ``failed`` after its startup timeout without delaying anything."""
    modes = ("garbage", "flood", "huge_line", "crash")
    configured: dict[str, dict[str, object]] = {
        mode: {"command": sys.executable, "args": [str(HOSTILE), mode], "approval": "never"}
        for mode in modes
    }
    configured["silent"] = {
        "command": sys.executable,
        "args": [str(HOSTILE), "hang_start"],
        "startup_timeout_seconds": 2,
    }
    calls = tuple(ToolCallSpec(f"c{i}", f"mcp__{m}__do_it", {}) for i, m in enumerate(modes))
    fake_provider.push(Reply(tool_calls=calls), Reply(text="survived"))
    daemon = await daemon_with(tmp_path, database_url, fake_provider, configured)
    try:
        await wait_ready(daemon, *modes)
        failed = await daemon.logged_times("mcp.server_failed", 1, server="silent")
        async with daemon.client() as client:
            listed = await servers(client)
            sid = await new_session(client, _workspace(tmp_path))
            async with watching(client, sid) as turn:
                await turn.start("go", "r1")
                finished = await turn.next("turn_finished")
            health = await client.get("/v1/health")
    finally:
        assert await daemon.stop() == 0
    assert "did not start within 2 s" in str(failed[0]["reason"])
    tools = {t["name"]: t for t in listed["garbage"]["tools"]}
    assert sorted(tools) == ["do it!", "do_it"]
    assert len({t["advertised_as"] for t in tools.values()}) == 2
    assert {s["name"] for s in listed["garbage"]["skipped"]} == {"big", "n" * 80}
    assert finished["outcome"] == {"status": "completed", "finalText": "survived"}
    results = {u["providerCallId"]: u for u in turn.of("tool_call_finished")}
    assert results["c0"]["status"] == "succeeded" and results["c0"]["output"] == "after the garbage"
    assert results["c1"]["status"] == "succeeded" and results["c1"]["output"] == "after the flood"
    for key in ("c2", "c3"):
        assert results[key]["status"] == "outcome_unknown", results[key]
    assert health.status_code == 200
    assert fake_provider.violations == []


async def test_a_sandboxed_stdio_server_reaches_no_socket_of_the_host(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """docs/mcp.md "Sandbox": in the sandbox (the default) a stdio server has a network namespace
    of its own: a port listening on the host's loopback is refused to it; unsandboxed it is not."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    configured = {
        name: {
            "command": sys.executable,
            "args": [str(HOSTILE), "probe_network"],
            "approval": "never",
            "sandbox": name == "boxed",
        }
        for name in ("boxed", "free")
    }
    calls = tuple(
        ToolCallSpec(name, f"mcp__{name}__do_it", {"port": port}) for name in ("boxed", "free")
    )
    fake_provider.push(Reply(tool_calls=calls), Reply(text="probed"))
    daemon = await daemon_with(tmp_path, database_url, fake_provider, configured)
    try:
        await wait_ready(daemon, "boxed", "free")
        async with daemon.client() as client:
            sid = await new_session(client, _workspace(tmp_path))
            async with watching(client, sid) as turn:
                await turn.start("probe", "r1")
                await turn.next("turn_finished")
    finally:
        listener.close()
        assert await daemon.stop() == 0
    results = {u["providerCallId"]: u["output"] for u in turn.of("tool_call_finished")}
    assert results == {"boxed": "ConnectionRefusedError", "free": "connected"}


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return workspace
