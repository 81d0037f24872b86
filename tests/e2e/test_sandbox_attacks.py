"""Issue 22: a scripted hostile model attacks the sandbox through the real daemon and real
bubblewrap (``openwork serve``, the fake provider on loopback), one test per row of the issue.
Each row failed on the main branch before issue 22 (docs/reliability.md "The sandbox").

The daemon's home, the user's home and the workspace live in a directory bash can see (not under
``/tmp``, which the sandbox replaces with the session's own): the masks are what hides them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply, ToolCallSpec
from tests.support.daemon import Daemon, run_turn_and_wait, start_daemon
from tests.support.visible import visible_dir

Call = tuple[str, Mapping[str, object]]


@dataclass
class Target:
    """The daemon under attack and what it must keep safe."""

    daemon: Daemon
    client: httpx.AsyncClient
    fake: FakeProvider
    session_id: str
    workspace: Path
    user_home: Path
    openwork_home: Path

    async def attack(self, *calls: Call) -> dict[str, str]:
        """One Turn in which the model makes ``calls`` in order; each call's result text."""
        self.fake.push(
            *(Reply(tool_calls=(ToolCallSpec(f"c{i}", n, a),)) for i, (n, a) in enumerate(calls)),
            Reply(text="done"),
        )
        _, updates = await run_turn_and_wait(
            self.client, self.session_id, "attack", f"req-{uuid.uuid4().hex}"
        )
        finished = updates[-1]["update"]
        assert isinstance(finished, dict) and finished["type"] == "turn_finished", finished
        return {
            str(m["tool_call_id"]): str(m.get("content"))
            for m in self.fake.bodies[-1]["messages"]  # type: ignore[union-attr]
            if isinstance(m, dict) and m.get("role") == "tool"
        }

    async def new_session(self) -> str:
        created = await self.client.post("/v1/sessions", json={"workspace": str(self.workspace)})
        assert created.status_code == 201, created.text
        return str(created.json()["session_id"])


@contextlib.asynccontextmanager
async def target(database_url: str, fake: FakeProvider, **env: str) -> AsyncIterator[Target]:
    with visible_dir() as base:
        workspace = base / "ws"
        workspace.mkdir()
        openwork_home = base / "openwork-home"
        user_home = base / "user-home"
        user_home.mkdir()
        daemon = await start_daemon(
            home=openwork_home,
            database_url=database_url,
            env=provider_env(fake, HOME=str(user_home), **env),
        )
        try:
            async with daemon.client() as client:
                created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
                assert created.status_code == 201, created.text
                yield Target(
                    daemon,
                    client,
                    fake,
                    str(created.json()["session_id"]),
                    workspace,
                    user_home,
                    openwork_home,
                )
        finally:
            assert await daemon.stop() == 0


def bash(command: str, **extra: object) -> Call:
    return ("bash", {"command": command, **extra})


async def test_bash_has_no_capabilities_even_when_the_daemon_runs_as_root(
    database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 22 point 1: CapEff, CapPrm and CapBnd are zero inside bash whatever the daemon's uid
    (CI runs it as root), and bash cannot make itself a new user namespace to get some back."""
    async with target(database_url, fake_provider) as t:
        results = await t.attack(
            bash("grep -E '^Cap(Eff|Prm|Bnd|Amb):' /proc/self/status"),
            bash("unshare -r id -u; echo unshare=$?"),
        )
    caps = dict(line.split(":\t") for line in results["c0"].splitlines() if line.startswith("Cap"))
    assert caps == dict.fromkeys(("CapPrm", "CapEff", "CapBnd", "CapAmb"), "0000000000000000")
    assert "unshare=0" not in results["c1"]


async def test_mount_umount_remount_and_ptrace_are_refused(
    database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 22 point 1: the model cannot unmount the mask over OPENWORK_HOME to read the token,
    remount ``/`` or the workspace's ``.git`` read-write, mount a filesystem, or ptrace."""
    owned = f"/usr/openwork-owned-{uuid.uuid4().hex}"
    try:
        async with target(database_url, fake_provider) as t:
            home = t.openwork_home
            results = await t.attack(
                bash(f"umount {home}; umount -l {home}; cat {home}/daemon.json"),
                bash(f"mount -o remount,rw /; touch {owned}; echo touched=$?"),
                bash("mount -t tmpfs none /mnt; echo mounted=$?"),
                bash("strace -f true 2>&1 | head -2; echo traced=${PIPESTATUS[0]}"),
            )
            token_file = (home / "daemon.json").read_text()
        written = await asyncio.to_thread(os.path.exists, owned)
    finally:
        with contextlib.suppress(FileNotFoundError):
            await asyncio.to_thread(os.unlink, owned)  # the main branch wrote it
    assert "e2e-token" in token_file
    assert "e2e-token" not in results["c0"]
    assert "touched=0" not in results["c1"] and not written
    assert "mounted=0" not in results["c2"]
    assert "traced=0" not in results["c3"]


async def test_loopback_tcp_to_a_listener_the_test_opens_is_refused(
    database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 22 point 2: bash has its own network namespace: neither a loopback listener of the
    host nor the daemon's own port can be reached."""
    accepted: list[int] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with target(database_url, fake_provider) as t:
            daemon_port = urlsplit(t.daemon.url).port
            results = await t.attack(
                bash(f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"),
                bash(f"exec 3<>/dev/tcp/127.0.0.1/{daemon_port} && echo connected"),
            )
    finally:
        server.close()
        await server.wait_closed()
    assert accepted == []
    assert "connected" not in results["c0"] and "connected" not in results["c1"]


async def test_postgresql_is_unreachable_from_bash(
    database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 22 point 2: the daemon's PostgreSQL (trust auth on loopback) cannot be reached by
    TCP, nor by its unix socket in /run or /var/run."""
    pg = urlsplit(database_url)
    probe = (
        "import socket, glob, sys\n"
        f"tcp = socket.create_connection(('{pg.hostname}', {pg.port}), timeout=2)\n"
        "print('tcp connected')\n"
    )
    unix = (
        "import socket, glob\n"
        "for path in glob.glob('/run/postgresql/.s.PGSQL.*') + "
        "glob.glob('/var/run/postgresql/.s.PGSQL.*') + glob.glob('/tmp/.s.PGSQL.*'):\n"
        "    s = socket.socket(socket.AF_UNIX)\n"
        "    s.connect(path)\n"
        "    print('unix connected', path)\n"
        "print('unix done')\n"
    )
    async with target(database_url, fake_provider) as t:
        results = await t.attack(
            bash(f'python3 -c "{probe}"'),
            bash(f'python3 -c "{unix}"'),
        )
    assert "tcp connected" not in results["c0"]
    assert "unix done" in results["c1"] and "unix connected" not in results["c1"]


async def test_a_unix_socket_the_test_opens_under_tmp_the_home_the_workspace_or_abstract_is_unreachable(
    database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 22 point 2: bash's /tmp is the session's own, so a host socket under /tmp is not
    there; a host socket anywhere else (the user's home, the workspace) is covered; and the
    abstract socket namespace belongs to the network namespace, so a host abstract socket is not
    reachable either."""
    path = f"/tmp/openwork-attack-{uuid.uuid4().hex}.sock"
    abstract = f"\0openwork-attack-{uuid.uuid4().hex}"
    accepted: list[str] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append("connected")
        writer.close()

    servers = [await asyncio.start_unix_server(on_connect, path)]
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(abstract)
    listener.listen()
    servers.append(await asyncio.start_unix_server(on_connect, sock=listener))
    try:
        async with target(database_url, fake_provider) as t:
            in_home = t.user_home / ".config" / "agent" / "control.sock"
            in_home.parent.mkdir(parents=True)
            in_workspace = t.workspace / "dev-server.sock"
            for where in (in_home, in_workspace):
                servers.append(await asyncio.start_unix_server(on_connect, str(where)))
            targets = (path, str(in_home), str(in_workspace), abstract)
            connect = (
                "import socket\n"
                f"for where in {targets!r}:\n"
                "    s = socket.socket(socket.AF_UNIX)\n"
                "    try:\n"
                "        s.connect(where)\n"
                "        print('connected')\n"
                "    except OSError as exc:\n"
                "        print('refused', exc.errno)\n"
            )
            results = await t.attack(bash(f'python3 -c "{connect}"'))
    finally:
        for server in servers:
            server.close()
        await asyncio.gather(*(server.wait_closed() for server in servers))
        await asyncio.to_thread(os.unlink, path)
    assert accepted == []
    assert results["c0"].count("refused") == 4, results["c0"]


def _git(workspace: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(workspace), *args], check=True, capture_output=True, text=True
    ).stdout


async def test_git_config_and_hooks_are_unchanged_after_write_edit_and_bash(
    database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 22 point 3: ``.git/config`` (``core.fsmonitor`` runs on the user's next
    ``git status``), hooks and ``info/`` cannot be changed by write, edit or bash in ``auto``,
    nor can ``.git`` be swapped for a planted one; ``git add`` and ``commit`` still work."""
    async with target(database_url, fake_provider) as t:
        ws = t.workspace
        _git(ws, "init", "-q")
        (ws / "a.txt").write_text("a\n")
        config = ws / ".git" / "config"
        before = config.read_bytes()
        evil = "[core]\n\tfsmonitor = touch /tmp/openwork-pwned\n"
        results = await t.attack(
            ("write", {"path": ".git/config", "content": evil}),
            ("read", {"path": ".git/config"}),
            ("edit", {"filePath": ".git/config", "oldString": "[core]", "newString": evil}),
            ("write", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch /x\n"}),
            bash("git config core.fsmonitor 'touch /tmp/pwned'; echo git-config=$?"),
            bash(f"printf '{evil}' >> .git/config; echo append=$?"),
            bash("echo 'touch /x' > .git/hooks/pre-commit; echo hook=$?"),
            bash("echo '* filter=evil' > .git/info/attributes; echo attributes=$?"),
            bash("mv .git .git-old; echo moved=$?; git init -q planted; echo planted=$?"),
            bash(
                "git add a.txt && git -c user.name=m -c user.email=m@example.com "
                "commit -qm 'from bash' && echo committed"
            ),
        )
        assert config.read_bytes() == before
        assert not (ws / ".git" / "hooks" / "pre-commit").exists()
        assert not (ws / ".git" / "info" / "attributes").exists()
        assert not (ws / ".git-old").exists()
        assert _git(ws, "log", "--format=%s") == "from bash\n"
    for refused in ("c0", "c2", "c3"):
        assert "is protected and cannot be written in any mode" in results[refused]
    for line in ("git-config=0", "append=0", "hook=0", "attributes=0", "moved=0"):
        assert line not in "".join(results.values()), line
    assert "committed" in results["c9"]


async def test_a_credential_file_is_unreadable_without_a_card(
    database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 22 point 4: ``~/.npmrc``, ``~/.ssh`` and ``/etc/shadow`` are refused by read, list
    and grep with the credential marker, and bash sees them empty."""
    async with target(database_url, fake_provider) as t:
        home = t.user_home
        token = "npm_" + uuid.uuid4().hex
        (home / ".npmrc").write_text(f"//registry.npmjs.org/:_authToken={token}\n")
        (home / ".ssh").mkdir()
        (home / ".ssh" / "id_ed25519").write_text(f"KEY {token}\n")
        results = await t.attack(
            ("read", {"path": str(home / ".npmrc")}),
            ("list", {"path": str(home / ".ssh")}),
            ("grep", {"pattern": "npm_", "path": str(home)}),
            ("read", {"path": "/etc/shadow"}),
            bash(f"cat {home}/.npmrc {home}/.ssh/id_ed25519; ls -a {home}/.ssh; cat /etc/shadow"),
        )
    assert all(token not in text for text in results.values())
    for refused in ("c0", "c1", "c3"):
        assert "holds credentials; reading it needs the user's approval" in results[refused]
    assert "No matches" in results["c2"]
    assert "root:" not in results["c4"]


async def test_a_2_gib_allocation_under_a_1_gib_limit_is_stopped(
    database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 22 point 5: ``OPENWORK_SANDBOX_MEMORY_MB=1024`` refuses a 2 GiB allocation and the
    result says which limit it hit."""
    async with target(database_url, fake_provider, OPENWORK_SANDBOX_MEMORY_MB="1024") as t:
        results = await t.attack(
            bash("python3 -c \"b = b'x' * (2 << 30); print('allocated', len(b))\"")
        )
    assert "allocated" not in results["c0"]
    assert "[sandbox: the command exceeded the memory limit of 1024 MB]" in results["c0"]


def fork_bomb(marker: str) -> str:
    """A fork bomb of depth 11 (4095 processes if nothing stops it), bounded so that the main
    branch, which has no limit, survives the check; ``marker`` is in every process's cmdline."""
    return (
        "bomb() { [ $1 -gt 0 ] && { bomb $(($1-1)) & bomb $(($1-1)) & }; sleep 20; }; "
        f"bomb 11 # {marker}"
    )


async def test_a_fork_bomb_is_stopped_at_the_process_limit(
    database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 22 point 5: ``OPENWORK_SANDBOX_MAX_PROCESSES`` bounds the command tree (the daemon
    runs as root in CI, where the kernel ignores RLIMIT_NPROC: the cgroup holds it); the result
    says so, and nothing of the tree survives the call."""
    marker = f"openwork-bomb-{uuid.uuid4().hex}"
    async with target(database_url, fake_provider, OPENWORK_SANDBOX_MAX_PROCESSES="64") as t:
        results = await t.attack(bash(fork_bomb(marker), timeoutMs=4000))
    assert "[sandbox: the command exceeded the process limit of 64]" in results["c0"]
    assert _processes_running(marker) == []


def _processes_running(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
    return found


async def test_the_daemon_and_other_sessions_answer_during_a_fork_bomb_and_a_memory_hog(
    database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 22 point 5: while one session's bash runs a fork bomb and then a memory hog, another
    session's snapshot is served every time it is asked (bench/sandbox_load.py measures the
    latency against the 200 ms budget; tests assert outcomes, not time)."""
    async with target(
        database_url,
        fake_provider,
        OPENWORK_SANDBOX_MAX_PROCESSES="256",
        OPENWORK_SANDBOX_MEMORY_MB="1024",
    ) as t:
        other = await t.new_session()
        statuses: list[int] = []
        attack = asyncio.ensure_future(
            t.attack(
                bash(fork_bomb(uuid.uuid4().hex), timeoutMs=4000),
                bash("python3 -c \"b = b'x' * (2 << 30)\"", timeoutMs=10000),
            )
        )
        while not attack.done():
            statuses.append((await t.client.get(f"/v1/sessions/{other}")).status_code)
        results = await attack
        health = await t.client.get("/v1/health")
    assert len(statuses) > 1 and set(statuses) == {200}
    assert health.status_code == 200
    assert "process limit" in results["c0"] and "memory limit" in results["c1"]


async def test_the_network_is_granted_only_by_the_card_for_that_call(
    database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 22 point 2: ``sandboxPermissions.network`` shows on the approval card; allowed once,
    that one call reaches the host's loopback; a non-interactive call cannot get it (the
    sub-agent case is the approval gate's rule, tested in tests/unit/approval)."""
    from tests.support.daemon import start_turn
    from tests.support.sse import open_events

    accepted: list[int] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        writer.write(b"hello from the host\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reach = f"exec 3<>/dev/tcp/127.0.0.1/{port} && head -1 <&3"
    granted = {
        "command": reach,
        "sandboxPermissions": {"network": True},
        "justification": "The test server answers on loopback.",
    }
    try:
        async with target(database_url, fake_provider) as t:
            fake_provider.push(
                Reply(tool_calls=(ToolCallSpec("c0", "bash", granted),)),
                Reply(tool_calls=(ToolCallSpec("c1", "bash", {"command": reach}),)),
                Reply(text="done"),
            )
            path = f"/v1/sessions/{t.session_id}/events"
            async with open_events(t.client, path) as events:
                tid = await start_turn(t.client, t.session_id, "reach it", "req-net")
                asked = await events.until(lambda e: e.type == "permission_requested")
                request = asked[-1].update["request"]
                assert request["card"]["network"] is True
                assert request["card"]["paths"] == []
                decide = f"/v1/sessions/{t.session_id}/turns/{tid}/permissions/"
                allowed = await t.client.post(
                    decide + request["toolCallId"], json={"decision": "allow_once"}
                )
                assert allowed.status_code == 202, allowed.text
                await events.until(lambda e: e.type == "turn_finished")
            results = {
                str(m["tool_call_id"]): str(m.get("content"))
                for m in fake_provider.bodies[-1]["messages"]  # type: ignore[union-attr]
                if isinstance(m, dict) and m.get("role") == "tool"
            }
    finally:
        server.close()
        await server.wait_closed()
    assert "hello from the host" in results["c0"]
    assert "hello from the host" not in results["c1"]
    assert accepted == [1]


SWAPPER = """
import os, sys
ws = sys.argv[1]
link, spare_link, spare_file = (os.path.join(ws, n) for n in ("sub", ".sub-link", ".sub-file"))
while True:
    if os.path.lexists(spare_link):
        os.unlink(spare_link)
    os.symlink("real", spare_link)
    os.replace(spare_link, link)
    with open(spare_file, "w") as fh:
        fh.write("not a directory")
    os.replace(spare_file, link)
"""
"""Swaps ``<ws>/sub`` between a symlink to ``real`` and a regular file as fast as it can."""


def _raced_calls(ws: Path, turn: int, count: int) -> tuple[ToolCallSpec, ...]:
    """``write`` and ``edit`` calls whose path and 15 grant paths (the most a call may ask for,
    plus one relative path that makes the request a rule denial, never a card) all go through
    the swapped ``sub``: 16 ``realpath`` walks in each call's ``prepare``."""
    calls = []
    for i in range(count):
        grants = [
            {"path": f"{ws}/sub/g{g}", "access": "write", "scope": "exact"} for g in range(15)
        ]
        asked = {
            "sandboxPermissions": {
                "paths": [*grants, {"path": "rel", "access": "write", "scope": "exact"}]
            },
            "justification": "The test races this path.",
        }
        target = f"sub/t{turn}-{i}.txt"
        if i % 3 == 0:
            arguments: dict[str, object] = {"path": target, "content": f"{i}\n"}
        elif i % 3 == 1:
            arguments = {"path": target, "content": f"{i}\n", **asked}
        else:
            arguments = {"filePath": target, "oldString": "", "newString": f"{i}\n", **asked}
        name = "edit" if "filePath" in arguments else "write"
        calls.append(ToolCallSpec(f"t{turn}c{i}", name, arguments))
    return tuple(calls)


async def test_write_and_edit_racing_a_symlink_swap_never_stop_the_session(
    database_url: str, fake_provider: FakeProvider
) -> None:
    """Issue 22 point 7: while another process swaps a path component between a symlink and a
    file, ``write`` and ``edit`` calls through it (their ``prepare`` walks it with ``realpath``,
    which raises ``OSError`` when the link changes under it) never end the turn or the actor:
    every turn completes, every call has its result, a call the race broke is an error result,
    and the session answers between turns."""
    turns, per_turn = 8, 25
    async with target(database_url, fake_provider) as t:
        ws = t.workspace
        (ws / "real").mkdir()
        finished: list[dict[str, object]] = []
        swapper = await asyncio.create_subprocess_exec(sys.executable, "-c", SWAPPER, str(ws))
        try:
            for turn in range(turns):
                fake_provider.push(
                    Reply(tool_calls=_raced_calls(ws, turn, per_turn)), Reply(text=f"turn {turn}")
                )
                turn_id, updates = await run_turn_and_wait(
                    t.client, t.session_id, f"race {turn}", f"req-race-{turn}", timeout=60
                )
                view = (await t.client.get(f"/v1/sessions/{t.session_id}/turns/{turn_id}")).json()
                assert (view["status"], view["error_code"]) == ("completed", None), view
                session = await t.client.get(f"/v1/sessions/{t.session_id}")
                assert session.status_code == 200, session.text
                assert session.json()["snapshot"]["runtime"]["state"] == "terminal"
                sent = [
                    m
                    for m in fake_provider.bodies[-1]["messages"]  # type: ignore[union-attr]
                    if isinstance(m, dict) and m.get("role") == "tool"
                ]
                assert len(sent) == per_turn * (turn + 1)  # the model got every call's result
                finished += [
                    u
                    for e in updates
                    if isinstance(u := e["update"], dict) and u["type"] == "tool_call_finished"
                ]
        finally:
            swapper.terminate()
            await swapper.wait()
    assert len(finished) == turns * per_turn
    assert {u["status"] for u in finished} <= {"succeeded", "failed", "denied"}
    raced = [u for u in finished if "OSError" in str(u["output"])]
    assert all(u["status"] == "failed" and u["isError"] for u in raced)
    print(f"{len(raced)} of {len(finished)} calls met the race in the tool's own code")


async def test_a_fifo_in_the_workspace_never_hangs_a_turn_the_file_search_or_the_stop(
    database_url: str, fake_provider: FakeProvider
) -> None:
    """A workspace is untrusted: a FIFO there blocked an ordinary ``open`` until a writer came —
    the turn of a model that read it never ended, a FIFO named ``.gitignore`` hung grep, glob and
    the file search, and SIGTERM could not stop the daemon (its worker thread waited on the
    FIFO). read, write and edit answer "not a regular file", grep and glob skip it, the file
    search answers, and the daemon stops with 0 (``target``). On the old code the FIFOs' blocked
    readers are let go before the stop."""
    async with target(database_url, fake_provider) as t:
        fifos = (t.workspace / "pipe", t.workspace / "sub" / ".gitignore")
        (t.workspace / "sub").mkdir()
        (t.workspace / "sub" / "notes.txt").write_text("needle\n")
        for fifo in fifos:
            os.mkfifo(fifo)
        try:
            results = await t.attack(
                ("read", {"path": "pipe"}),
                ("write", {"path": "pipe", "content": "x"}),
                ("edit", {"filePath": "pipe", "oldString": "a", "newString": "b"}),
                ("grep", {"pattern": "needle"}),
                ("glob", {"pattern": "**/*"}),
            )
            found = await t.client.get(
                f"/v1/sessions/{t.session_id}/files", params={"query": "notes"}
            )
        finally:
            for fifo in fifos:
                os.close(os.open(fifo, os.O_RDWR | os.O_NONBLOCK))
    for call in ("c0", "c1", "c2"):
        assert "not a regular file" in results[call], results[call]
    assert "sub/notes.txt" in results["c3"] and "sub/notes.txt" in results["c4"]
    assert found.status_code == 200
    assert [f["path"] for f in found.json()["files"]] == ["sub/notes.txt"]


async def test_reverting_a_turn_never_writes_through_a_symlink_the_model_planted(
    database_url: str, fake_provider: FakeProvider
) -> None:
    """tools.md §8, issue 26 point 3: the user's revert undoes the files a turn's tools wrote —
    the daemon writes them, outside the sandbox. A model that wrote ``hook.txt`` twice (first
    ``echo pwned``, then the exact bytes of the user's ``~/.bashrc``) and had bash replace it
    with a symlink to ``~/.bashrc`` made the revert write ``echo pwned`` into ``~/.bashrc`` and
    then delete it (each undo matched its hash through the link); the undo route the same. Now
    each such change is a conflict, left as it is, and the start-up file is untouched."""
    async with target(database_url, fake_provider) as t:
        bashrc = t.user_home / ".bashrc"
        bashrc.write_text("# the user's own start-up file\n")
        writes = [("hook.txt", "echo pwned\n"), ("hook.txt", bashrc.read_text())]
        t.fake.push(
            *(
                Reply(tool_calls=(ToolCallSpec(f"w{i}", "write", {"path": p, "content": c}),))
                for i, (p, c) in enumerate(writes)
            ),
            Reply(
                tool_calls=(ToolCallSpec("b", *bash(f"rm hook.txt && ln -s {bashrc} hook.txt")),)
            ),
            Reply(text="done"),
        )
        turn_id, updates = await run_turn_and_wait(t.client, t.session_id, "attack", "req-plant")
        changes = [
            artifact["changeId"]
            for e in updates
            if isinstance(u := e["update"], dict) and u["type"] == "tool_call_finished"
            for artifact in u.get("artifacts") or ()  # type: ignore[union-attr]
        ]
        assert len(changes) == 2 and (t.workspace / "hook.txt").is_symlink()
        undo = await t.client.post(
            f"/v1/sessions/{t.session_id}/file-changes/undo",
            json={"change_ids": [changes[-1]]},
        )
        reverted = await t.client.post(f"/v1/sessions/{t.session_id}/turns/{turn_id}/revert")
        assert bashrc.read_text() == "# the user's own start-up file\n"
        assert (t.workspace / "hook.txt").is_symlink()
    assert (undo.status_code, undo.json()["error"]["code"]) == (409, "change_conflict")
    assert reverted.status_code == 200, reverted.text
    body = reverted.json()
    assert body["changes"] == []
    assert [c["change_id"] for c in body["conflicts"]] == changes[::-1]
    assert [c["code"] for c in body["conflicts"]] == ["change_conflict"] * 2
    assert all("no longer the file" in c["message"] for c in body["conflicts"])


async def test_a_hostile_gitignore_glob_or_grep_never_freezes_the_daemon(
    database_url: str, fake_provider: FakeProvider
) -> None:
    """The repository and the model are untrusted: a ``.gitignore`` line ``*a*a…*b`` (or the
    model's glob of it) against a long file name, or the model's grep ``(a|aa)*c`` against a
    long line, made Python's ``re`` backtrack for years while holding the GIL, so one file
    search or tool call froze the whole daemon — ``/v1/health``, every session and SIGTERM
    included (found 2026-12-06 by probing a real daemon). Gitignore-style patterns and grep's
    pattern are matched by RE2 (``openwork_tools/gitignore.py``, ``builtin/line_search.py``):
    the file search, glob and grep answer, and the daemon stops with 0 (``target``)."""
    async with target(database_url, fake_provider) as t:
        (t.workspace / ".gitignore").write_text("*a" * 20 + "*b\n[b-a]\n*.log\n")
        (t.workspace / ("a" * 100)).write_text("needle\n" + "a" * 60 + "\n")
        (t.workspace / "x.log").write_text("needle\n")
        found = await t.client.get(
            f"/v1/sessions/{t.session_id}/files", params={"query": "aaa"}, timeout=30
        )
        results = await t.attack(
            ("glob", {"pattern": "*a" * 20 + "*b"}),
            ("glob", {"pattern": "**/*"}),
            ("grep", {"pattern": "needle"}),
            ("grep", {"pattern": "(a|aa)*c"}),
        )
        health = await t.client.get("/v1/health", timeout=30)
    assert found.status_code == 200, found.text
    assert [f["path"] for f in found.json()["files"]] == ["a" * 100]
    assert results["c0"].startswith("No files"), results["c0"]
    assert results["c1"] == "a" * 100
    assert results["c2"].splitlines()[:2] == ["a" * 100, "1:needle"]
    assert results["c3"].startswith("No matches"), results["c3"]
    assert health.status_code == 200
