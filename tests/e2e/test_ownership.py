"""One owner per session (ownership issue, points 2–5; session-runtime.md §1 "single owners", §10):
real `openwork serve` processes on real PostgreSQL — one daemon per home, one owner per session
across daemons on one database, takeover after the owner died, fencing of a daemon paused past
its lease, and acknowledged turns that survive kill -9."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import asyncpg
import httpx
import orjson

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Gate, Held, Reply
from tests.support.contract import contract_client
from tests.support.daemon import Daemon, start_daemon, start_turn
from tests.support.sse import SseEvent, open_events

LEASE = "2"


async def _session(client: httpx.AsyncClient, workspace: Path) -> str:
    response = await client.post("/v1/sessions", json={"workspace": str(workspace)})
    assert response.status_code == 201, response.text
    return str(response.json()["session_id"])


async def _turn_status(client: httpx.AsyncClient, sid: str, tid: str) -> dict[str, object]:
    response = await client.get(f"/v1/sessions/{sid}/turns/{tid}")
    assert response.status_code == 200, response.text
    body = response.json()
    assert isinstance(body, dict)
    return body


async def _until_lease_expired(database_url: str, sid: str) -> None:
    """Wait for the session's lease deadline as the database states it (a clock event)."""
    conn = await asyncpg.connect(database_url)
    try:
        expires = await conn.fetchval(
            "SELECT expires_at FROM session_leases WHERE session_id = $1", sid
        )
        now = await conn.fetchval("SELECT now()")
    finally:
        await conn.close()
    assert expires is not None
    await asyncio.sleep(max(0.0, (expires - now).total_seconds()) + 0.05)


async def _messages(database_url: str, sid: str) -> list[tuple[int, str, str | None]]:
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch(
            "SELECT sequence, role, turn_id FROM messages WHERE session_id = $1 ORDER BY sequence",
            sid,
        )
    finally:
        await conn.close()
    return [(r["sequence"], r["role"], r["turn_id"]) for r in rows]


async def _wait_turn_terminal(client: httpx.AsyncClient, sid: str, tid: str) -> dict[str, object]:
    async with open_events(client, f"/v1/sessions/{sid}/events") as events:
        body = await _turn_status(client, sid, tid)
        if body["status"] == "running":
            await events.until(lambda e: e.turn_id == tid and e.type == "turn_finished", timeout=30)
            body = await _turn_status(client, sid, tid)
    return body


async def test_a_second_daemon_on_the_same_home_exits_naming_the_first_and_touches_nothing(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """Point 2: an exclusive lock for the process lifetime; the second `serve` exits non-zero
    within seconds with one line naming the running daemon's URL and pid; the first keeps its
    daemon.json and keeps serving."""
    home = tmp_path / "home"
    first = await start_daemon(
        home=home, database_url=database_url, env=provider_env(fake_provider)
    )
    try:
        discovery = home / "daemon.json"
        before = discovery.read_bytes()
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENWORK_")} | {
            "OPENWORK_HOME": str(home),
            "OPENWORK_LISTEN": "127.0.0.1:0",
            "OPENWORK_DATABASE_URL": database_url,
            "HOME": str(home / "user-home"),
        }
        second = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "openwork_core.daemon",
            "serve",
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        async with asyncio.timeout(20):
            _, err = await second.communicate()
        assert second.returncode not in (0, None)
        lines = [line for line in err.decode().splitlines() if line.strip()]
        assert len(lines) == 1, lines
        assert first.url in lines[0] and str(first.process.pid) in lines[0]
        assert discovery.read_bytes() == before
        async with first.client() as client:
            assert (await client.get("/v1/health")).status_code == 200
    finally:
        assert await first.stop() == 0


async def test_two_daemons_on_one_database_drive_a_session_from_its_owner_only(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """Point 3: the non-owner answers 409 session_owned_elsewhere with the owner's URL and serves
    reads of committed facts from the database; its restart correction leaves the owner's live
    turn running; the owner's turn then completes untouched."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    gate = Gate()
    fake_provider.push(Held(Reply(text="the owner's answer"), gate))
    env = provider_env(fake_provider, OPENWORK_SESSION_LEASE_SECONDS=LEASE)
    a = await start_daemon(home=tmp_path / "a", database_url=database_url, env=env)
    b: Daemon | None = None
    try:
        async with a.client() as ca:
            sid = await _session(ca, workspace)
            tid = await start_turn(ca, sid, "hello", "req-a")
            await fake_provider.wait_for_requests(1, timeout=20)
            b = await start_daemon(home=tmp_path / "b", database_url=database_url, env=env)
            async with b.client() as cb:
                assert (await _turn_status(cb, sid, tid))["status"] == "running"
                refused = await cb.post(
                    f"/v1/sessions/{sid}/turns",
                    json={"client_request_id": "req-b", "input": [{"type": "text", "text": "x"}]},
                )
                assert refused.status_code == 409, refused.text
                error = refused.json()["error"]
                assert (error["code"], error["owner_url"]) == ("session_owned_elsewhere", a.url)
                cancel = await cb.post(f"/v1/sessions/{sid}/turns/{tid}/cancel")
                assert cancel.json()["error"]["code"] == "session_owned_elsewhere"
                same = await cb.post(
                    f"/v1/sessions/{sid}/turns",
                    json={"client_request_id": "req-a", "input": [{"type": "text", "text": "x"}]},
                )
                assert (same.status_code, same.json()["turn_id"]) == (202, tid)  # from the DB
                assert (await cb.get(f"/v1/sessions/{sid}")).status_code == 200
                messages = (await cb.get(f"/v1/sessions/{sid}/messages")).json()["messages"]
                assert messages[0]["role"] == "user"
                gate.release()
                done = await _wait_turn_terminal(ca, sid, tid)
                assert (done["status"], done["final_text"]) == ("completed", "the owner's answer")
    finally:
        gate.release()
        if b is not None:
            assert await b.stop() == 0
        assert await a.stop() == 0


async def test_after_the_owner_is_killed_another_daemon_takes_the_session_over(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """Point 3: once the dead owner's lease expired, the next action on another daemon takes the
    session: the dead owner's running turn becomes interrupted / process_restart and the next turn
    runs there with the retained World State re-sent (context-window.md §3 restart replay)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("Keep it short.\n")
    gate = Gate()
    fake_provider.push(Held(Reply(text="never delivered"), gate), Reply(text="taken over"))
    env = provider_env(fake_provider, OPENWORK_SESSION_LEASE_SECONDS=LEASE)
    a = await start_daemon(home=tmp_path / "a", database_url=database_url, env=env)
    b = await start_daemon(home=tmp_path / "b", database_url=database_url, env=env)
    try:
        async with a.client() as ca:
            sid = await _session(ca, workspace)
            old = await start_turn(ca, sid, "first", "req-1")
            await fake_provider.wait_for_requests(1, timeout=20)
        await a.stop(signal.SIGKILL)
        await _until_lease_expired(database_url, sid)
        async with b.client() as cb:
            new = await start_turn(cb, sid, "second", "req-2")
            interrupted = await _turn_status(cb, sid, old)
            assert (interrupted["status"], interrupted["error_code"]) == (
                "interrupted",
                "process_restart",
            )
            done = await _wait_turn_terminal(cb, sid, new)
            assert (done["status"], done["final_text"]) == ("completed", "taken over")
        last = fake_provider.bodies[-1]
        texts = [
            m.get("content")
            for m in last["messages"]  # type: ignore[union-attr]
            if isinstance(m, dict) and m.get("role") == "user"
        ]
        assert any(isinstance(t, str) and "Keep it short." in t for t in texts[-4:])
    finally:
        gate.release()
        assert await b.stop() == 0


async def test_a_daemon_paused_past_its_lease_writes_nothing_after_it_wakes(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """Point 3, fencing: SIGSTOP the owner past its lease, another daemon takes over and runs a
    turn, SIGCONT — the first ends its turn but writes nothing more to the session; the session
    stays whole (gapless sequences, the taken-over turn interrupted, the new one completed)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    gate = Gate()
    fake_provider.push(Held(Reply(text="stale answer"), gate), Reply(text="new owner"))
    env = provider_env(fake_provider, OPENWORK_SESSION_LEASE_SECONDS=LEASE)
    a = await start_daemon(home=tmp_path / "a", database_url=database_url, env=env)
    b = await start_daemon(home=tmp_path / "b", database_url=database_url, env=env)
    try:
        async with a.client() as ca:
            sid = await _session(ca, workspace)
            async with open_events(ca, f"/v1/sessions/{sid}/events") as a_events:
                stale = await start_turn(ca, sid, "first", "req-1")
                await fake_provider.wait_for_requests(1, timeout=20)
                a.process.send_signal(signal.SIGSTOP)
                try:
                    await _until_lease_expired(database_url, sid)
                    async with b.client() as cb:
                        fresh = await start_turn(cb, sid, "second", "req-2")
                        done = await _wait_turn_terminal(cb, sid, fresh)
                        assert done["status"] == "completed"
                    settled = await _messages(database_url, sid)
                finally:
                    a.process.send_signal(signal.SIGCONT)
                gate.release()
                ended = await a_events.until(
                    lambda e: e.turn_id == stale and e.type == "turn_finished", timeout=30
                )
                assert ended[-1].update["outcome"]["status"] != "completed"
        assert await _messages(database_url, sid) == settled
        assert [s for s, _, _ in settled] == list(range(1, len(settled) + 1))
        assert not [m for m in settled if m[2] == stale and m[1] == "assistant"]
        async with b.client() as cb:
            old = await _turn_status(cb, sid, stale)
            assert (old["status"], old["error_code"]) == ("interrupted", "process_restart")
    finally:
        gate.release()
        if a.process.returncode is None:
            a.process.send_signal(signal.SIGCONT)
            await a.stop()
        assert await b.stop() == 0


async def test_a_turn_acknowledged_with_202_exists_after_kill_9_right_after(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """Point 4, three times: the 202 of POST …/turns is sent only after the turn row and the
    user's input are committed; kill -9 right after it loses nothing."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    home = tmp_path / "home"
    env = provider_env(fake_provider)
    daemon = await start_daemon(home=home, database_url=database_url, env=env)
    async with daemon.client() as client:
        sid = await _session(client, workspace)
    for attempt in range(3):
        fake_provider.push(Held(Reply(text="never"), Gate()))
        async with daemon.client() as client:
            response = await client.post(
                f"/v1/sessions/{sid}/turns",
                json={
                    "client_request_id": f"req-{attempt}",
                    "input": [{"type": "text", "text": f"attempt {attempt}"}],
                },
            )
        daemon.process.kill()  # right after the 202
        await daemon.stop(signal.SIGKILL)
        assert response.status_code == 202, response.text
        tid = response.json()["turn_id"]
        daemon = await start_daemon(home=home, database_url=database_url, env=env)
        async with daemon.client() as client:
            body = await _turn_status(client, sid, tid)
            assert (body["status"], body["error_code"]) == ("interrupted", "process_restart")
            texts = [
                m["content"]
                for m in (await client.get(f"/v1/sessions/{sid}/messages")).json()["messages"]
                if m["role"] == "user" and m["kind"] == "normal"
            ]
            assert len(texts) == attempt + 1
    assert await daemon.stop() == 0


async def test_an_embedded_postgres_left_by_a_killed_daemon_is_stopped_and_never_leaked(
    embedded_home: Path, fake_provider: FakeProvider
) -> None:
    """Point 2: the embedded PostgreSQL belongs to the daemon that started it. After kill -9 the
    next start stops the orphan deliberately (never two servers on one data directory); a clean
    exit stops its own server."""
    home = embedded_home
    env = provider_env(fake_provider)
    first = await start_daemon(home=home, database_url=None, env=env, timeout=120)
    orphan = int((home / "pgdata" / "postmaster.pid").read_text().split()[0])
    await first.stop(signal.SIGKILL)
    os.kill(orphan, 0)  # still running: the orphan
    second = await start_daemon(home=home, database_url=None, env=env, timeout=120)
    try:
        current = int((home / "pgdata" / "postmaster.pid").read_text().split()[0])
        assert current != orphan
        assert not _alive(orphan)
        assert any("database.embedded_orphan_stopped" in line for line in second.log_lines)
    finally:
        assert await second.stop() == 0
    assert not _alive(current)


def _alive(pid: int) -> bool:
    """Running (a zombie nobody reaped yet, in a container without an init, has exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


async def test_the_token_hunt_finds_nothing_with_any_tool(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """Point 1, containment: the model hunts the bearer token with every tool (absolute paths,
    `..`, a symlink it makes itself, bash cat / find / env / grep); every attempt is refused or
    sees nothing, and the token appears in no request the provider receives."""
    from tests.fakes.fake_script import ToolCallSpec

    workspace = tmp_path / "ws"
    workspace.mkdir()
    home = tmp_path / "home"
    token = "hunt-" + os.urandom(16).hex()
    secret = home / "daemon.json"
    hunts = [
        ("read", {"path": str(secret)}),
        ("read", {"path": "../home/daemon.json"}),
        ("list", {"path": str(home / "run")}),
        ("list", {"path": str(home)}),
        ("glob", {"pattern": "**/daemon.json", "path": str(tmp_path)}),
        ("grep", {"pattern": "hunt-", "path": str(tmp_path)}),
        ("bash", {"command": f"cat {secret}"}),
        ("bash", {"command": f"find {home} -name 'daemon*'"}),
        ("bash", {"command": "env"}),
        ("bash", {"command": f"grep -r hunt- {tmp_path} || true"}),
        ("bash", {"command": f"ln -s {secret} leak.json && cat leak.json"}),
        ("read", {"path": "leak.json"}),
        ("write", {"path": str(secret), "content": "{}"}),
    ]
    fake_provider.push(
        *(Reply(tool_calls=(ToolCallSpec(f"call_{i}", n, a),)) for i, (n, a) in enumerate(hunts)),
        Reply(text="found nothing"),
    )
    env = provider_env(fake_provider, OPENWORK_TOKEN=token)
    daemon = await start_daemon(home=home, database_url=database_url, env=env)
    try:
        async with contract_client(
            base_url=daemon.url, headers={"Authorization": f"Bearer {token}"}, timeout=20
        ) as client:
            assert token in secret.read_text()
            sid = await _session(client, workspace)
            tid = await start_turn(client, sid, "find the daemon's token", "req-hunt")
            done = await _wait_turn_terminal(client, sid, tid)
            assert done["status"] == "completed", done
            everything = (await client.get(f"/v1/sessions/{sid}/messages")).text
        assert len(fake_provider.requests) == len(hunts) + 1
        for request in fake_provider.requests:
            assert token not in orjson.dumps(request.body).decode()
        assert token not in everything
        results = {
            m["tool_call_id"]: str(m.get("content"))
            for m in fake_provider.bodies[-1]["messages"]  # type: ignore[union-attr]
            if isinstance(m, dict) and m.get("role") == "tool"
        }
        for refused in ("call_0", "call_1", "call_2", "call_3"):
            assert "belongs to the OpenWork daemon" in results[refused], results[refused]
        assert "cannot be written in any mode" in results["call_12"]
        assert "OPENWORK_" not in results["call_8"]
        assert token not in "\n".join(daemon.log_lines)
        assert secret.read_text().count(token) == 1
    finally:
        assert await daemon.stop() == 0


async def test_every_client_of_one_daemon_sees_the_card_and_the_first_decision_wins(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """Point 3, several clients on one daemon (two app windows and the CLI): each connected client
    sees the same updates; the first decision on an approval card wins, the second gets
    409 permission_not_pending, every client sees the one resolution; a client that disconnected
    mid-turn left no lock behind."""
    from tests.fakes.fake_script import ToolCallSpec

    workspace = tmp_path / "ws"
    workspace.mkdir()
    escalated = {
        "command": "echo ok > report.txt",
        "sandboxPermissions": {
            "paths": [{"path": str(workspace.resolve()), "access": "write", "scope": "subtree"}]
        },
        "justification": "The build writes its report into the workspace.",
    }
    fake_provider.push(
        Reply(tool_calls=(ToolCallSpec("call_1", "bash", escalated),)), Reply(text="built")
    )
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=database_url, env=provider_env(fake_provider)
    )
    try:
        async with daemon.client() as one, daemon.client() as two, daemon.client() as gone:
            created = await one.post(
                "/v1/sessions",
                json={"workspace": str(workspace), "permission_mode": "accept-edits"},
            )
            sid = created.json()["session_id"]
            path = f"/v1/sessions/{sid}/events"
            async with open_events(one, path) as first, open_events(two, path) as second:
                async with open_events(gone, path) as leaving:
                    tid = await start_turn(one, sid, "build it", "req-1")
                    await leaving.until(lambda e: e.type == "turn_started")
                asked = await first.until(lambda e: e.type == "permission_requested")
                seen = await second.until(lambda e: e.type == "permission_requested")
                assert [e.data for e in asked] == [e.data for e in seen]
                call_id = asked[-1].update["request"]["toolCallId"]
                decide = f"/v1/sessions/{sid}/turns/{tid}/permissions/{call_id}"
                won = await two.post(decide, json={"decision": "allow_once"})
                lost = await one.post(decide, json={"decision": "deny"})
                assert won.status_code == 202, won.text
                assert (lost.status_code, lost.json()["error"]["code"]) == (
                    409,
                    "permission_not_pending",
                )
                ends_one = await first.until(lambda e: e.type == "turn_finished")
                ends_two = await second.until(lambda e: e.type == "turn_finished")
            for ends in (ends_one, ends_two):
                resolved = [e.update for e in ends if e.type == "permission_resolved"]
                assert [r["decision"] for r in resolved] == ["allow_once"]
                assert ends[-1].update["outcome"]["status"] == "completed"
            assert (workspace / "report.txt").read_text() == "ok\n"
            fake_provider.push(Reply(text="again"))
            again = await start_turn(gone, sid, "and again", "req-2")
            assert (await _wait_turn_terminal(gone, sid, again))["status"] == "completed"
    finally:
        assert await daemon.stop() == 0


async def _observed_turn(
    client: httpx.AsyncClient, sid: str, text: str, request_id: str, *, last_event_id: int | None
) -> list[SseEvent]:
    """Connect to the session's stream (with ``Last-Event-ID``), start a turn, read to its
    turn_finished."""
    async with open_events(
        client, f"/v1/sessions/{sid}/events", last_event_id=last_event_id
    ) as events:
        tid = await start_turn(client, sid, text, request_id)
        return await events.until(lambda e: e.turn_id == tid and e.type == "turn_finished")


def _assert_typed_resync(event: SseEvent, *, sid: str | None) -> int:
    """``event: resync`` with ``id:`` = its sequence, the update ``{"type": "resync"}``; returns
    the sequence."""
    assert event.event == "resync" and event.update == {"type": "resync"}
    assert event.id is not None and int(event.id) == event.sequence
    if sid is not None:
        assert (event.data["sessionId"], event.data["turnId"]) == (sid, None)
    return event.sequence


async def test_update_sequences_never_go_back_across_a_restart_and_a_takeover_by_another_daemon(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 25 point 2 (desktop-protocol.md §3 "`sequence` per session, strictly increasing",
    §4 "`sequence <= lastSequence`: ignore"): after a clean restart the session's snapshot and its
    next updates are above every sequence handed out before; a ``Last-Event-ID`` from before gets
    a typed ``resync`` with ``id:`` (the current sequence) and then only newer updates; the global
    stream's ids are above the previous process's and its ``resync`` is typed too; a takeover by
    another daemon after the owner was killed numbers above the dead owner's updates."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    fake_provider.push(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    env = provider_env(fake_provider, OPENWORK_SESSION_LEASE_SECONDS=LEASE)
    home = tmp_path / "a"
    first = await start_daemon(home=home, database_url=database_url, env=env)
    async with first.client() as client:
        sid = await _session(client, workspace)
        async with open_events(client, "/v1/events") as broadcast:
            before = await _observed_turn(client, sid, "one", "req-1", last_event_id=None)
            global_before = [int(e.id or 0) for e in await broadcast.take(len(before))]
    assert [e.sequence for e in before] == list(range(1, len(before) + 1))  # from 1 at first
    assert global_before == sorted(global_before)
    assert await first.stop() == 0

    restarted = await start_daemon(home=home, database_url=database_url, env=env)
    try:
        async with restarted.client() as client:
            unloaded = (await client.get(f"/v1/sessions/{sid}")).json()["snapshot"]
            assert unloaded["lastUpdateSequence"] > before[-1].sequence
            resync, *after = await _observed_turn(
                client, sid, "two", "req-2", last_event_id=before[-1].sequence
            )
            current = _assert_typed_resync(resync, sid=sid)
            assert current == unloaded["lastUpdateSequence"]
            assert [e.sequence for e in after] == list(range(current + 1, current + len(after) + 1))
            async with open_events(client, "/v1/events", last_event_id=global_before[-1]) as stream:
                global_resync = await stream.next()
            assert _assert_typed_resync(global_resync, sid=None) > global_before[-1]
            assert global_resync.data.keys() == {"version", "sequence", "update"}
    finally:
        await restarted.stop(signal.SIGKILL)
    await _until_lease_expired(database_url, sid)

    other = await start_daemon(home=tmp_path / "b", database_url=database_url, env=env)
    try:
        async with other.client() as client:
            resync, *taken_over = await _observed_turn(
                client, sid, "three", "req-3", last_event_id=after[-1].sequence
            )
        assert _assert_typed_resync(resync, sid=sid) > after[-1].sequence
        assert taken_over[0].sequence == resync.sequence + 1
        assert taken_over[-1].update["outcome"]["status"] == "completed"
    finally:
        assert await other.stop() == 0
