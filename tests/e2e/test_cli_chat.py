"""`openwork chat` as a new user meets it (issue 25 point 8): text typed during a turn, slash
commands, `--model` / `--mode`, `openwork stop` during a turn. Subprocesses against a real daemon
(the module's daemon of tests/e2e/test_cli.py), on a pseudo-terminal where a terminal matters."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.e2e.conftest import provider_env
from tests.e2e.test_cli import daemon, fake_provider, project, shared  # noqa: F401  (fixtures)
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Gate, Held, Reply
from tests.support.cli import run_cli
from tests.support.daemon import Daemon, start_daemon
from tests.support.postgres import PgCluster
from tests.support.pty_cli import PtyCli

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def _this_turns_request(fake: FakeProvider, before: int, text: str) -> int:
    """The number of the request that carries ``text`` (an earlier test's late request is not
    it), awaited."""
    count = before + 1
    async with asyncio.timeout(30):
        while True:
            requests = await fake.wait_for_requests(count, timeout=30)
            for number, request in enumerate(requests[before:], start=before + 1):
                if text.encode() in request.raw:
                    return number
            count += 1


def _user_texts(body: object) -> list[str]:
    messages = body.get("messages", []) if isinstance(body, dict) else []
    return [
        m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
        for m in messages
        if m.get("role") == "user"
    ]


async def test_on_a_tty_text_typed_during_a_turn_is_not_echoed_and_steers_the_running_turn(
    daemon: Daemon,  # noqa: F811
    fake_provider: FakeProvider,  # noqa: F811
    project: Path,  # noqa: F811
) -> None:
    """Issue 25 point 8, issue 26 point 1: typed during a turn → not in the answer, sent to the
    running turn as a steer (shown as steering), which the turn's next model call carries after
    its answer so far."""
    gate = Gate()
    fake_provider.push(Held(Reply(text="The first answer."), gate), Reply(text="The second one."))
    before = len(fake_provider.requests)
    cli = await PtyCli.start("chat", "first question", home=daemon.home, cwd=project)
    try:
        first = await _this_turns_request(fake_provider, before, "first question")
        cli.type("and a follow-up\r")
        await cli.wait_for("steering: and a follow-up")
        gate.release()
        assert await cli.exit_code() == 0
    finally:
        gate.release()
        cli.close()
    lines = [line.strip() for line in cli.text.splitlines()]
    assert "The first answer." in lines and "The second one." in lines
    # the typed text shows only as steering, as sent (and beside the spinner while typed): on
    # a line of its own, never inside the answer (control sequences are stripped, so a line may
    # begin with the spinner frames it overwrote)
    steering = "steering: and a follow-up (read at the turn's next step)"
    mentions = [line for line in lines if "and a follow-up" in line]
    assert all(line.endswith((steering, "› and a follow-up")) for line in mentions), mentions
    assert sum(line.endswith(steering) for line in mentions) == 1
    second = fake_provider.requests[first]  # the same turn's next model call
    assert _user_texts(second.body)[-1] == "and a follow-up"
    assert "The first answer." in json.dumps(second.body)


async def test_a_line_steered_into_a_turn_is_in_the_prompts_history_as_if_typed_there(
    daemon: Daemon,  # noqa: F811
    fake_provider: FakeProvider,  # noqa: F811
    project: Path,  # noqa: F811
) -> None:
    """Issue 15 §2, issue 26 point 1: the interactive prompt's history keeps every line the
    user sent, a steer typed during a turn included (it was missing: only lines typed at the
    prompt or queued for the next turn were kept)."""
    gate = Gate()
    fake_provider.push(Held(Reply(text="The first answer."), gate), Reply(text="The second one."))
    before = len(fake_provider.requests)
    cli = await PtyCli.start("chat", home=daemon.home, cwd=project)
    try:
        await cli.wait_for("› ")
        cli.type("the history question\r")
        await _this_turns_request(fake_provider, before, "the history question")
        cli.type("and the steered line\r")
        await cli.wait_for("steering: and the steered line")
        gate.release()
        await cli.wait_for("The second one.")
        cli.type("/exit\r")
        assert await cli.exit_code() == 0
    finally:
        gate.release()
        cli.close()
    history = (daemon.home / "chat_history").read_text().splitlines()
    assert history.index("the history question") < history.index("and the steered line")


async def test_a_slash_command_typed_during_a_turn_is_no_steer_and_runs_when_the_turn_ends(
    daemon: Daemon,  # noqa: F811
    fake_provider: FakeProvider,  # noqa: F811
    project: Path,  # noqa: F811
) -> None:
    """Issue 25 point 8, issue 26 point 1: ``/exit`` typed while a turn runs is not sent to the
    model as a steer (it became the turn's next user message, and the chat never left: found by
    a loaded full run); it waits, and when the turn ends the chat exits 0."""
    gate = Gate()
    fake_provider.push(Held(Reply(text="The answer."), gate))
    before = len(fake_provider.requests)
    cli = await PtyCli.start("chat", home=daemon.home, cwd=project)
    try:
        await cli.wait_for("› ")
        cli.type("a question\r")
        asked = await _this_turns_request(fake_provider, before, "a question")
        cli.type("/exit\r")
        await cli.wait_for("queued: /exit (run when this turn ends)")
        gate.release()
        assert await cli.exit_code() == 0
    finally:
        gate.release()
        cli.close()
    assert "The answer." in cli.text and "steering: /exit" not in cli.text
    assert len(fake_provider.requests) == asked, "no model call after the answer: no steer"


async def test_on_a_tty_text_typed_before_a_cancel_is_kept_and_no_more_is_sent(
    daemon: Daemon,  # noqa: F811
    fake_provider: FakeProvider,  # noqa: F811
    project: Path,  # noqa: F811
) -> None:
    """Issue 25 point 8, issue 26 point 1: a cancel sends nothing more to the model; what was
    typed before it was a steer, committed to the Conversation (cancel discards nothing)."""
    gate = Gate()
    fake_provider.push(Held(Reply(text="too late"), gate))
    before = len(fake_provider.requests)
    cli = await PtyCli.start("chat", "a long job", home=daemon.home, cwd=project)
    try:
        await _this_turns_request(fake_provider, before, "a long job")
        cli.type("never mind\r")
        await cli.wait_for("steering: never mind")
        cli.interrupt()
        assert await cli.exit_code() == 130
    finally:
        gate.release()
        cli.close()
    assert "turn cancelled" in cli.text
    assert not any(b"never mind" in r.raw for r in fake_provider.requests[before + 1 :])


async def test_slash_commands_are_answered_by_chat_and_never_sent_to_the_model(
    daemon: Daemon,  # noqa: F811
    fake_provider: FakeProvider,  # noqa: F811
    project: Path,  # noqa: F811
) -> None:
    """Issue 25 point 8: /help, /mode, /model, /inspect, an unknown command, then a message and
    /quit, on a prompt read from a pipe."""
    fake_provider.push(Reply(text="hi there"))
    before = len(fake_provider.requests)
    typed = "\n".join(
        [
            "/help",
            "/mode accept_edits",
            "/mode",
            "/model",
            "/model other-model",
            "/inspect",
            "/bogus",
            "hello",
            "/quit",
            "not read",
        ]
    )
    run = await run_cli("chat", "--new", home=daemon.home, cwd=project, stdin=typed.encode())
    assert run.code == 0, run.stderr
    out, err = run.stdout.splitlines(), run.stderr
    assert any(line.startswith("  /mode [auto|accept_edits]") for line in out)
    assert any(line.startswith("  /quit") for line in out)
    assert "mode accept_edits, from the next tool call" in err
    assert "mode accept_edits (one of: auto, accept_edits)" in err
    assert "model fake-model (provider default's default)" in err
    assert "the model stays as it was: the daemon refused the switch" in err
    assert "`openwork chat --new --model other-model` starts a session on it" in err
    assert "unknown command /bogus" in err
    assert any(line.startswith("[") and line.endswith("]") for line in out)  # the inspect bar
    assert "hi there" in out
    requests = fake_provider.requests[before:]
    assert len(requests) == 1
    assert "hello" in _user_texts(requests[0].body)
    assert b"/help" not in requests[0].raw and b"not read" not in requests[0].raw
    session_id = err.split()[1]
    listed = json.loads((await run_cli("sessions", "--json", home=daemon.home)).stdout)
    (mine,) = [s for s in listed["sessions"] if s["session_id"] == session_id]
    assert mine["permission_mode"] == "accept_edits"


async def test_slash_new_starts_another_session_in_the_folder(
    daemon: Daemon,  # noqa: F811
    fake_provider: FakeProvider,  # noqa: F811
    project: Path,  # noqa: F811
) -> None:
    fake_provider.push(Reply(text="one"), Reply(text="two"))
    before = len(fake_provider.requests)
    typed = b"alpha-message\n/new\nbeta-message\n/quit\n"
    run = await run_cli("chat", home=daemon.home, cwd=project, stdin=typed)
    assert run.code == 0, run.stderr
    announced = [line.split()[1] for line in run.stderr.splitlines() if line.startswith("session ")]
    assert len(announced) == 2 and announced[0] != announced[1]
    second = fake_provider.requests[before + 1]
    assert b"beta-message" in second.raw and b"alpha-message" not in second.raw


async def test_chat_mode_and_model_set_a_new_sessions_and_a_refused_switch_says_how_to_get_it(
    daemon: Daemon,  # noqa: F811
    fake_provider: FakeProvider,  # noqa: F811
    project: Path,  # noqa: F811
) -> None:
    """Issue 25 point 8: `chat --mode`, `--model`; switching an existing session's model is
    refused by this daemon (issue 26 adds it): a clear line, nothing sent."""
    fake_provider.push(Reply(text="ok"), Reply(text="back to auto"))
    args = ("--new", "--mode", "accept_edits", "--model", "fake-model", "hello")
    first = await run_cli("chat", *args, home=daemon.home, cwd=project)
    assert first.code == 0, first.stderr
    session_id = first.stderr.split()[1]
    async with daemon.client() as http:
        session = (await http.get(f"/v1/sessions/{session_id}")).json()
    assert (session["permission_mode"], session["model"]) == ("accept_edits", "fake-model")

    before = len(fake_provider.requests)
    refused = await run_cli("chat", "--model", "bigger-model", "hi", home=daemon.home, cwd=project)
    assert refused.code == 1
    assert f"session {session_id} cannot switch to model bigger-model" in refused.stderr
    assert "add --new to start a session on it" in refused.stderr
    assert len(fake_provider.requests) == before

    back = await run_cli("chat", "--mode", "auto", "again", home=daemon.home, cwd=project)
    assert back.code == 0, back.stderr
    async with daemon.client() as http:
        session = (await http.get(f"/v1/sessions/{session_id}")).json()
    assert session["permission_mode"] == "auto"


async def test_openwork_stop_during_a_turn_ends_chat_as_a_cancel_with_a_clear_line(
    pg_cluster: PgCluster, tmp_path: Path
) -> None:
    """Issue 25 point 8: the daemon cancels running turns when it stops; chat exits 130 and says
    the daemon stopped (not 1, "the event stream ended")."""
    gate = Gate()
    folder = tmp_path / "project"
    folder.mkdir()
    with FakeProvider() as fake:
        fake.push(Held(Reply(text="too late"), gate))
        own = await start_daemon(
            home=tmp_path / "home",
            database_url=await pg_cluster.new_database(),
            env=provider_env(fake),
        )
        try:
            chat = asyncio.create_task(run_cli("chat", "hold on", home=own.home, cwd=folder))
            await fake.wait_for_requests(1, timeout=30)
            stopped = await run_cli("stop", home=own.home)
            assert stopped.code == 0, stopped.stderr
            run = await chat
        finally:
            gate.release()
            await own.stop()
    assert run.code == 130, run.stderr
    assert "the daemon stopped during the turn" in run.stderr
    assert "event stream ended" not in run.stderr
