"""Issue 27 end to end, against real MCP servers no one here wrote: ``mcp-server-time`` and
``mcp-server-git`` (PyPI, stdio, in the sandbox) and ``@modelcontextprotocol/server-everything``
(npm, streamable HTTP) behind a real ``openwork serve`` and the fake provider."""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply, ToolCallSpec
from tests.support.daemon import Daemon, start_daemon
from tests.support.mcp_servers import HttpServer, everything_http, python_server, write_config
from tests.support.mcp_turns import new_session, servers, wait_ready, watching


@pytest.fixture
async def everything() -> AsyncIterator[HttpServer]:
    async with everything_http() as server:
        yield server


def git_repo(path: Path) -> Path:
    path.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.email", "t@example.com"],
        ["config", "user.name", "T"],
    ):
        subprocess.run(["git", *args], cwd=path, check=True)
    (path / "a.txt").write_text("a\n")
    return path


async def daemon_with(
    tmp_path: Path, database_url: str, fake: FakeProvider, servers: dict[str, dict[str, object]]
) -> Daemon:
    config = write_config(tmp_path / "config.toml", servers)
    return await start_daemon(
        home=tmp_path / "home",
        database_url=database_url,
        env={**provider_env(fake), "OPENWORK_CONFIG": str(config)},
    )


def three_servers(repo: Path, everything: HttpServer) -> dict[str, dict[str, object]]:
    return {
        "time": {"command": python_server("mcp-server-time")},
        "git": {
            "command": python_server("mcp-server-git"),
            "args": ["--repository", str(repo)],
            "cwd": str(repo),
        },
        "everything": {"url": everything.url},
    }


def tool_names(body: object) -> list[str]:
    assert isinstance(body, dict)
    return [t["function"]["name"] for t in body["tools"]]


async def test_mcp_tools_are_advertised_sorted_after_the_built_ins_and_called_end_to_end(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider, everything: HttpServer
) -> None:
    """Issue 27 points 2–4: three real servers, two transports; the same Tool Surface bytes after
    a daemon restart; calls through the fake provider; every request's tool definitions obey the
    three protocols' tool rules (tests/fakes/tool_rules.py, checked by the fake)."""
    repo = git_repo(tmp_path / "repo")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake_provider.push(
        Reply(
            tool_calls=(
                ToolCallSpec("c1", "mcp__time__get_current_time", {"timezone": "Etc/UTC"}),
                ToolCallSpec("c2", "mcp__git__git_status", {"repo_path": str(repo)}),
                ToolCallSpec("c3", "mcp__everything__get-sum", {"a": 2, "b": 40}),
            )
        ),
        Reply(text="all three answered"),
    )
    daemon = await daemon_with(
        tmp_path, database_url, fake_provider, three_servers(repo, everything)
    )
    try:
        await wait_ready(daemon, "time", "git", "everything")
        async with daemon.client() as client:
            listed = await servers(client)
            assert {n: s["status"] for n, s in listed.items()} == dict.fromkeys(
                ("everything", "git", "time"), "ready"
            )
            time_tools = {t["name"]: t for t in listed["time"]["tools"]}
            assert time_tools["get_current_time"]["advertised_as"] == "mcp__time__get_current_time"
            assert all(t["tokens"] > 0 for t in time_tools.values())
            sid = await new_session(client, workspace)
            async with watching(client, sid) as turn:
                await turn.start("what time is it, what changed, and 2+40?", "r1")
                finished = await turn.next("turn_finished")
            results = {u["providerCallId"]: u for u in turn.of("tool_call_finished")}
    finally:
        assert await daemon.stop() == 0
    assert finished["outcome"]["status"] == "completed"
    assert results["c1"]["status"] == "succeeded"
    assert json.loads(results["c1"]["output"])["timezone"] == "Etc/UTC"
    assert results["c2"]["status"] == "succeeded" and "a.txt" in results["c2"]["output"]
    assert results["c3"]["status"] == "succeeded" and "42" in results["c3"]["output"]
    first = fake_provider.bodies[0]
    names = tool_names(first)
    builtin = names[: names.index("interrupt_agent") + 1]
    mcp = names[len(builtin) :]
    assert builtin[:7] == ["read", "write", "edit", "grep", "glob", "list", "bash"]
    assert mcp == sorted(mcp) and {n.split("__")[1] for n in mcp} == {"everything", "git", "time"}
    assert fake_provider.violations == []

    fake_provider.push(Reply(text="same tools"))
    again = await daemon_with(
        tmp_path, database_url, fake_provider, three_servers(repo, everything)
    )
    try:
        await wait_ready(again, "time", "git", "everything")
        async with again.client() as client, watching(client, sid) as turn:
            await turn.start("again", "r2")
            await turn.next("turn_finished")
    finally:
        assert await again.stop() == 0
    after_restart = fake_provider.bodies[-1]
    assert json.dumps(after_restart["tools"]) == json.dumps(first["tools"])  # type: ignore[index]


async def test_a_call_that_changes_something_asks_first_with_server_tool_and_arguments(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 27 point 4: ``git_add`` is not read-only, so under ``approval = "annotations"`` it
    shows the card (server, tool, arguments) and runs only once allowed; a server that cannot
    start contributes no tools and the inspection says why; the inspection and the context page
    show the MCP tools' share of the window."""
    repo = git_repo(tmp_path / "repo")
    arguments = {"repo_path": str(repo), "files": ["a.txt"]}
    fake_provider.push(
        Reply(tool_calls=(ToolCallSpec("c1", "mcp__git__git_add", arguments),)),
        Reply(text="staged"),
    )
    configured = {
        "git": {
            "command": python_server("mcp-server-git"),
            "args": ["--repository", str(repo)],
            "cwd": str(repo),
        },
        "broken": {"command": str(tmp_path / "no-such-server"), "sandbox": False},
    }
    daemon = await daemon_with(tmp_path, database_url, fake_provider, configured)
    try:
        await wait_ready(daemon, "git")
        await daemon.logged_times("mcp.server_failed", 1, server="broken")
        async with daemon.client() as client:
            sid = await new_session(client, repo)
            async with watching(client, sid) as turn:
                turn_id = await turn.start("stage a.txt", "r1")
                asked = await turn.next("permission_requested")
                staged_before = _staged(repo)
                request = asked["request"]
                decided = await client.post(
                    f"/v1/sessions/{sid}/turns/{turn_id}/permissions/{request['toolCallId']}",
                    json={"decision": "allow_once"},
                )
                assert decided.status_code == 202, decided.text
                await turn.next("turn_finished")
            inspection = (await client.get(f"/v1/sessions/{sid}/context")).json()
            overview = (await client.get(f"/v1/sessions/{sid}/context/overview")).json()
    finally:
        assert await daemon.stop() == 0
    assert request["toolName"] == "mcp__git__git_add"
    assert request["card"]["mcp"] == {"server": "git", "tool": "git_add", "arguments": arguments}
    assert staged_before == "" and _staged(repo) == "a.txt"
    (result,) = turn.of("tool_call_finished")
    assert result["status"] == "succeeded"
    shares = {s["name"]: s for s in inspection["mcp"]["servers"]}
    assert shares["git"]["status"] == "ready" and shares["git"]["tools"] == 12
    assert shares["broken"] == {
        "name": "broken",
        "status": shares["broken"]["status"],
        "reason": shares["broken"]["reason"],
        "tools": 0,
        "tokens": 0,
    }
    assert shares["broken"]["status"] in ("failed", "starting") and shares["broken"]["reason"]
    assert not any("broken" in t["name"] for t in inspection["tools"])
    assert inspection["mcp"]["tokens"] == shares["git"]["tokens"] > 0
    segments = {s["region"]: s["tokens"] for s in overview["bar"]["segments"]}
    assert 0 < segments["mcp_tools"] < inspection["budget"]["tool_surface_tokens"]
    assert segments["tools"] + segments["mcp_tools"] == inspection["budget"]["tool_surface_tokens"]


def _staged(repo: Path) -> str:
    done = subprocess.run(
        ["git", "diff", "--cached", "--name-only"], cwd=repo, capture_output=True, text=True
    )
    return done.stdout.strip()
