"""`openwork serve` start-up (issue 15 point 3): the banner and its warnings, and every
configuration error as one line naming the setting, exit 2, no traceback. Also the log file
(point 4): JSON lines with session_id / turn_id, one access line per request, one line per model
call and per tool call."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import pkgutil
import signal
import socket
import sys
from pathlib import Path

import pytest

from openwork_core.storage.postgres.steady_statements import steady_statements
from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply, ToolCallSpec
from tests.support.cli import CliRun, cli_env, run_cli
from tests.support.daemon import TOKEN, run_turn_and_wait, start_daemon
from tests.support.ports import refused_port
from tests.unit.compaction.compaction_support import valid_summary


async def _serve_expecting_failure(home: Path, env: dict[str, str]) -> CliRun:
    return await run_cli(
        "serve", home=home, env={"OPENWORK_LISTEN": "127.0.0.1:0", **env}, timeout=60
    )


def _one_line_naming(run: CliRun, setting: str) -> str:
    assert run.code == 2, run.stderr
    assert "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip() and line[0] != "{"]
    assert len(lines) == 1, run.stderr  # besides the JSON log lines of what went before
    assert lines[0].startswith(f"openwork: {setting}: ")
    return lines[0]


@pytest.mark.parametrize(
    ("env", "setting", "says"),
    [
        ({"OPENWORK_LISTEN": "localhost"}, "OPENWORK_LISTEN", "host:port"),
        ({"OPENWORK_LISTEN": "example.org:80"}, "OPENWORK_LISTEN", "not an IP address"),
        ({"OPENWORK_PROVIDER": "openai-caht"}, "OPENWORK_PROVIDER", "openai-chat"),
        ({"OPENWORK_DATABASE_URL": "mysql://localhost/db"}, "OPENWORK_DATABASE_URL", "PostgreSQL"),
        (
            {
                "OPENWORK_PROVIDER": "openai-chat",
                "OPENWORK_MODEL": "m",
                "OPENWORK_MODEL_CONTEXT_WINDOW": "1000",
                "OPENWORK_MODEL_MAX_OUTPUT_TOKENS": "1000",
            },
            "OPENWORK_MODEL_MAX_OUTPUT_TOKENS",
            "below OPENWORK_MODEL_CONTEXT_WINDOW",
        ),
        ({"OPENWORK_MODEL_CONTEXT_WINDOW": "many"}, "OPENWORK_MODEL_CONTEXT_WINDOW", "'many'"),
    ],
)
async def test_a_bad_setting_is_one_line_naming_it_and_exit_2(
    tmp_path: Path, env: dict[str, str], setting: str, says: str
) -> None:
    """Issue 15 §3: no traceback; the setting and what to do."""
    run = await _serve_expecting_failure(tmp_path / "home", env)
    assert says in _one_line_naming(run, setting)


async def test_a_home_that_cannot_be_created_is_one_line_naming_openwork_home(
    tmp_path: Path,
) -> None:
    """Issue 15 §3: OPENWORK_HOME under a regular file cannot be created."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    run = await _serve_expecting_failure(tmp_path / "h", {"OPENWORK_HOME": str(blocker / "home")})
    assert "cannot use" in _one_line_naming(run, "OPENWORK_HOME")


async def test_an_unreachable_database_is_one_line_without_the_password(tmp_path: Path) -> None:
    """Issue 15 §3: a bad database URL; the password is never printed."""
    with refused_port() as port:
        url = f"postgresql://user:sekret@127.0.0.1:{port}/db"
        run = await _serve_expecting_failure(tmp_path / "home", {"OPENWORK_DATABASE_URL": url})
    line = _one_line_naming(run, "OPENWORK_DATABASE_URL")
    assert f"postgresql://user@127.0.0.1:{port}/db" in line
    assert "sekret" not in run.stderr


async def test_a_port_in_use_is_one_line_naming_openwork_listen(
    tmp_path: Path, database_url: str
) -> None:
    """Issue 15 §3: port in use."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = await _serve_expecting_failure(
            tmp_path / "home",
            {"OPENWORK_LISTEN": f"127.0.0.1:{port}", "OPENWORK_DATABASE_URL": database_url},
        )
    assert "already in use" in _one_line_naming(run, "OPENWORK_LISTEN")


async def test_listening_beyond_loopback_needs_the_flag_and_a_token(
    tmp_path: Path, database_url: str
) -> None:
    """Issue 15 §3 / §6: beyond loopback only on request, and never with a random token."""
    base = {"OPENWORK_DATABASE_URL": database_url, "OPENWORK_LISTEN": "0.0.0.0:0"}
    refused = await _serve_expecting_failure(tmp_path / "a", base)
    assert "OPENWORK_ALLOW_REMOTE" in _one_line_naming(refused, "OPENWORK_LISTEN")
    no_token = await _serve_expecting_failure(
        tmp_path / "b", base | {"OPENWORK_ALLOW_REMOTE": "true"}
    )
    _one_line_naming(no_token, "OPENWORK_TOKEN")


async def test_the_banner_names_url_discovery_database_provider_and_sandbox_and_warns(
    tmp_path: Path, database_url: str
) -> None:
    """Issue 15 §3: a banner on stderr (readable format), with warnings for a missing provider."""
    home = tmp_path / "home"
    env = cli_env(
        home,
        OPENWORK_LOG_FORMAT="console",
        OPENWORK_LISTEN="127.0.0.1:0",
        OPENWORK_DATABASE_URL=database_url,
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "openwork_core.cli",
        "serve",
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    banner: list[str] = []
    try:
        async with asyncio.timeout(60):
            async for raw in process.stderr:
                line = raw.decode().rstrip("\n")
                if line.startswith("OpenWork ") or banner:
                    banner.append(line)
                if banner and line.startswith("warning: "):
                    break
    finally:
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(20):
            await process.communicate()
    assert process.returncode == 0
    assert banner[0].startswith("OpenWork ") and " listening on http://127.0.0.1:" in banner[0]
    assert banner[1] == f"  daemon.json  {home / 'daemon.json'} (URL and bearer token, mode 0600)"
    assert banner[2].startswith("  database     postgresql://")
    assert banner[3] == "  provider     none (OPENWORK_PROVIDER unset)"
    assert banner[4].startswith("  sandbox      ")
    as_root = [line for line in banner if line.startswith("  as root      ")]
    assert len(as_root) == (1 if os.geteuid() == 0 else 0)  # issue 22: one line, as root only
    assert banner[6 + len(as_root)] == f"  logs         {home / 'logs' / 'openwork.log'}"
    assert banner[-1].startswith("warning: no model provider: set OPENWORK_PROVIDER")


async def test_a_key_missing_for_a_hosted_provider_is_warned_at_start(
    tmp_path: Path, database_url: str
) -> None:
    """Issue 15 §3: warnings for a missing key (JSON stderr: the banner is one event)."""
    env = {"OPENWORK_PROVIDER": "anthropic", "OPENWORK_MODEL": "claude"}
    daemon = await start_daemon(home=tmp_path / "home", database_url=database_url, env=env)
    try:
        events = [json.loads(line) for line in daemon.log_lines if line.startswith("{")]
    finally:
        assert await daemon.stop() == 0
    assert all(line.startswith("{") for line in daemon.log_lines)
    (banner,) = [e for e in events if e["event"] == "daemon.banner"]
    assert any("anthropic" in line and "no key" in line for line in banner["lines"])
    warnings = [e["warning"] for e in events if e["event"] == "daemon.configuration_warning"]
    assert [w.split(":")[0] for w in warnings] == ["no API key"]


async def test_the_log_file_has_json_lines_with_ids_access_lines_and_call_lines(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 15 §4: session_id / turn_id on every line of a session's work; one access line per
    request (method, route template, status, duration; no token, no body); one line per model
    call (provider, model, latency, tokens) and per tool call."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake_provider.push(
        Reply(tool_calls=(ToolCallSpec("call_1", "bash", {"command": "echo secret-output"}),)),
        Reply(tool_calls=(ToolCallSpec("call_2", "write", {"path": "f.txt", "content": "x\n"}),)),
        Reply(text="done"),
        Reply(text=valid_summary(), chunk_chars=400),
    )
    home = tmp_path / "home"
    daemon = await start_daemon(
        home=home, database_url=database_url, env=provider_env(fake_provider)
    )
    try:
        async with daemon.client() as client:
            created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
            sid = created.json()["session_id"]
            turn_id, updates = await run_turn_and_wait(client, sid, "prompt-body-text", "req-logs")
            (change_id,) = [
                u["update"]["artifacts"][0]["changeId"]  # type: ignore[index]
                for u in updates
                if u["update"]["type"] == "tool_call_finished" and u["update"].get("artifacts")  # type: ignore[index,union-attr]
            ]
            undone = await client.post(
                f"/v1/sessions/{sid}/file-changes/undo", json={"change_ids": [change_id]}
            )
            assert undone.status_code == 200, undone.text
            compacted = await client.post(f"/v1/sessions/{sid}/compact")
            assert compacted.status_code == 200, compacted.text
    finally:
        assert await daemon.stop() == 0
    text = (home / "logs" / "openwork.log").read_text()
    events = [json.loads(line) for line in text.splitlines()]
    assert TOKEN not in text
    assert "prompt-body-text" not in text
    assert "secret-output" not in text
    access = [e for e in events if e["event"] == "http.request"]
    routes = {(e["method"], e["route"], e["status"]) for e in access}
    assert ("POST", "/v1/sessions", 201) in routes
    assert ("POST", "/v1/sessions/{sid}/turns", 202) in routes
    assert ("GET", "/v1/sessions/{sid}/events", 200) in routes
    assert all(isinstance(e["duration_ms"], int) for e in access)
    model_calls = [e for e in events if e["event"] == "model.call"]
    turn_calls = [e for e in model_calls if e["name"].startswith("model call")]
    assert len(turn_calls) == 3
    (summary_call,) = [e for e in model_calls if e["name"] == "compaction summary"]
    assert (summary_call["model"], summary_call["session_id"]) == ("fake-model", sid)
    for call in turn_calls:
        assert (call["provider"], call["model"], call["status"]) == (
            "default",
            "fake-model",
            "succeeded",
        )
        assert (call["session_id"], call["turn_id"]) == (sid, turn_id)
        assert call["input_tokens"] > 1_000 and call["output_tokens"] == 7  # the fake's counts
        assert isinstance(call["duration_ms"], int)
    tool_calls = [e for e in events if e["event"] == "tool.call"]
    assert [(t["tool"], t["status"]) for t in tool_calls] == [
        ("bash", "succeeded"),
        ("write", "succeeded"),
    ]
    assert all((t["session_id"], t["turn_id"]) == (sid, turn_id) for t in tool_calls)
    # outside a turn too: the undo and the manual compaction name the session
    (undo,) = [e for e in events if e["event"] == "file_changes.applied"]
    (compaction,) = [e for e in events if e["event"] == "compaction.finished"]
    assert undo["session_id"] == compaction["session_id"] == sid
    assert "turn_id" not in undo
    session_work = [e for e in events if e["event"].startswith(("turn.", "compaction", "session."))]
    assert all(e.get("session_id") == sid for e in session_work)


def declared_statements() -> int:
    """How many statements the storage modules declare ``steady``: each of them imported here."""
    package = importlib.import_module("openwork_core.storage.postgres")
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    return len(steady_statements())


async def test_once_listening_the_daemon_primes_its_pool_and_its_turns_run(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 13 §3 (the first model call no slower than the second): after it listens, the
    daemon builds its session registry and prepares the steady path's statements on its pool's
    connections in the background, and says so: every statement the storage modules declare
    (the registry's import declared them all before the pool is primed); a turn then runs as
    ever."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake_provider.push(Reply(text="hello"))
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=database_url, env=provider_env(fake_provider)
    )
    try:
        await daemon.logged("session_runtime.ready")  # the registry, built once it listens
        warmed = await daemon.logged("storage.warmed_up")
        assert warmed["statements"] == declared_statements()
        assert isinstance(warmed["connections"], int) and warmed["connections"] >= 1
        async with daemon.client() as client:
            created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
            sid = created.json()["session_id"]
            turn_id, _ = await run_turn_and_wait(client, sid, "hi", "req-primed")
            turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
        assert (turn["status"], turn["final_text"]) == ("completed", "hello")
    finally:
        assert await daemon.stop() == 0
    assert not any("storage.warm_up_failed" in line for line in daemon.log_lines)


def test_python_can_run_the_cli_module() -> None:
    """`python -m openwork_core.cli` is what the tests run; the console script and
    `python -m openwork_core.daemon` run the same entry point."""
    from openwork_core.cli import main
    from openwork_core.daemon.cli import main as legacy

    assert main is legacy
    assert sys.executable


async def test_a_session_and_turn_are_served_the_moment_the_daemon_listens(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 13 §3: the session runtime loads after listen (the warm-up thread imports it), yet
    a session and a turn sent as soon as ``daemon.listening`` is logged are served — the first
    operation that needs the runtime waits for its import instead of failing — and every route
    answers at once (a read of the new session, its messages, the providers)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake_provider.push(Reply(text="served"))
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=database_url, env=provider_env(fake_provider)
    )
    try:
        async with daemon.client() as client:
            created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
            assert created.status_code == 201, created.text
            sid = created.json()["session_id"]
            _, updates = await run_turn_and_wait(client, sid, "hello", "req-first")
            finished = updates[-1]["update"]
            assert isinstance(finished, dict)
            assert finished["outcome"] == {"status": "completed", "finalText": "served"}
            for path in (f"/v1/sessions/{sid}", f"/v1/sessions/{sid}/messages", "/v1/providers"):
                assert (await client.get(path)).status_code == 200, path
    finally:
        assert await daemon.stop() == 0
    events = [json.loads(line) for line in daemon.log_lines if line.startswith("{")]
    assert "session_runtime.imported" in {e["event"] for e in events}
    assert "session_runtime.import_failed" not in {e["event"] for e in events}
