"""Load (issue 13, point 7): many sessions × 20 model calls through the HTTP API, on one daemon
and then on two daemons sharing one database.

Run: ``.venv/bin/python bench/load.py [--sessions 100] [--fakes 2] [--alone-only]``. Starts ``--fakes`` processes
of ``bench/fake_openai_server.py`` on one port (``SO_REUSEPORT``; zero delay, pre-encoded answers:
19 ``read`` tool calls then a final text), measures their own limit first (requests per second
from this process over keep-alive connections, with a request the size of a late call), then:

* one session alone on one daemon (after a warm-up session; ``ALONE_SESSIONS`` such sessions one
  after the other, their gaps pooled): the short-path gap between its model calls (goal ≤ 10 ms)
  and the daemon's CPU time per model call (``--alone-only`` stops here);
* one daemon: ``--sessions`` sessions created and driven concurrently, one turn each (20 model
  calls), every turn awaited on its SSE stream until ``turn_finished``;
* two daemons on one database: the sessions spread over both (each created on, and driven
  through, one daemon, which takes its lease at the first turn).

Printed per run: errors (a non-202, a turn not ``completed``, a missing call), calls per second
(model calls ÷ wall time from the first POST to the last ``turn_finished``), the gap between a
session's model calls (response written by the fake → the next request of that session arrives,
i.e. all daemon time between two calls: tool, writes, prepare), p50 / p99, peak RSS of each
daemon (``VmHWM``), the CPU per model call of each party (the daemons, the ``postgres``
processes working for the run — its database's backends and the server's own processes, not
other databases' backends on a shared server —, the fakes and this load client, from
``/proc/PID/stat``) and the cores they kept busy;
then two daemons' throughput ÷ one daemon's (goal ≥ 1.8 on 2 cores), the ceiling the machine allows
that ratio (from the one-daemon run's shares: one daemon can use one core, all parties together
all cores, so ``min(2 ÷ daemon CPU, cores ÷ total CPU) ÷ min(1 ÷ daemon CPU, cores ÷ total
CPU)``), and the fake's own limit ÷ the calls per second it served (how far it was from being the
bottleneck). The sessions are driven by ``bench/load_client.py`` (raw asyncio HTTP), so the load
generator takes as little of the machine as it can (it and the fakes run on uvloop, as the
daemon does).

Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import signal
import socket
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import uvloop

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.load_client import Connection, EventStream
from tests.support.daemon import TOKEN, Daemon, start_daemon
from tests.support.postgres import find_cluster

CALLS = 20
ALONE_SESSIONS = 5
"""Sessions run one after the other for the alone figures (their gaps pooled)."""
HERE = Path(__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_TICK = os.sysconf("SC_CLK_TCK")


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process and its reaped children (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / _TICK


def _own_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process itself (its reaped children left out)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:13]) / _TICK


def _backend_database(title: str) -> str | None:
    """The database of a client backend from its process title (``postgres: [cluster: ]user
    database host(port) state``), ``None`` for the server's own processes."""
    words = title.removeprefix("postgres: ").split()
    if words and words[0].endswith(":"):  # Debian's cluster name, "15/main:"
        words = words[1:]
    if len(words) >= 3 and (words[2].endswith(")") or words[2] == "[local]"):
        return words[1]
    return None


def _postgres_cpu(database: str) -> dict[int, float]:
    """CPU seconds of each PostgreSQL process working for this run: the backends connected to
    ``database`` and the server's own processes (the postmaster — without its reaped children —,
    WAL writer, checkpointer, background writer, autovacuum). Backends of other databases (other
    benchmarks and test suites on a shared server) are left out."""
    cpu: dict[int, float] = {}
    for pid, title in _postgres_processes():
        with contextlib.suppress(OSError):
            if _backend_database(title) in (None, database):
                cpu[pid] = _own_cpu_s(pid)
    return cpu


def _postgres_processes() -> list[tuple[int, str]]:
    found = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        with contextlib.suppress(OSError):
            if comm.read_text().strip() == "postgres":
                title = (comm.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                found.append((int(comm.parent.name), title.strip()))
    return found


@dataclass
class CpuShares:
    """CPU seconds each party spent during a run."""

    daemons: float
    postgres: float
    fakes: float
    client: float
    server: float
    """The whole server's CPU (``CpuSnapshot.server``), printed apart; not in ``total``."""

    @property
    def total(self) -> float:
        return self.daemons + self.postgres + self.fakes + self.client


@dataclass
class CpuSnapshot:
    daemons: float
    postgres: dict[int, float]
    """By process: a backend started during the run counts from 0."""
    fakes: float
    client: float
    server: float
    """Every ``postgres`` process with its reaped children (other databases' work included)."""


def _cpu_snapshot(daemons: list[Daemon], fakes: Fakes, database: str) -> CpuSnapshot:
    return CpuSnapshot(
        daemons=sum(_cpu_s(d.process.pid) for d in daemons),
        postgres=_postgres_cpu(database),
        fakes=sum(_cpu_s(p.pid) for p in fakes.processes),
        client=_cpu_s(os.getpid()),
        server=sum(_cpu_s(pid) for pid, _ in _postgres_processes()),
    )


def _hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


@dataclass
class Fakes:
    port: int
    log: Path
    processes: list[asyncio.subprocess.Process]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reset_log(self) -> None:
        for p in self.log.parent.glob(f"{self.log.name}*"):
            p.write_text("")


async def _start_fakes(count: int, root: Path) -> Fakes:
    port = _free_port()
    log = root / "fake.log"
    processes = []
    for i in range(count):
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(HERE / "fake_openai_server.py"),
            str(port),
            f"{log}.{i}",
            str(CALLS),
            stdout=asyncio.subprocess.PIPE,
        )
        assert process.stdout is not None
        async with asyncio.timeout(30):
            assert (await process.stdout.readline()).strip() == b"ready"
        processes.append(process)
    return Fakes(port, log, processes)


async def _stop_fakes(fakes: Fakes) -> None:
    for p in fakes.processes:
        if p.returncode is None:
            p.send_signal(signal.SIGINT)
    for p in fakes.processes:
        async with asyncio.timeout(10):
            await p.wait()


async def _fake_limit(fakes: Fakes, seconds: float = 3.0, connections: int = 16) -> float:
    """Requests per second the fakes answer (keep-alive, a 30 KB body with 18 tool results)."""
    body = b'{"messages": [' + b'{"role": "tool", "tool_call_id": "x", "content": "y"},' * 18
    body += b'{"role": "user", "content": "' + b"z" * 30_000 + b'"}]}'
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    done = 0
    deadline = time.monotonic() + seconds

    async def worker() -> None:
        nonlocal done
        reader, writer = await asyncio.open_connection("127.0.0.1", fakes.port)
        try:
            while time.monotonic() < deadline:
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
                done += 1
        finally:
            writer.close()

    start = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(connections)))
    return done / (time.monotonic() - start)


@dataclass
class RunResult:
    errors: list[str]
    wall_s: float
    calls: int
    gaps_ms: list[float]
    hwm_kib: list[int]
    cpu: CpuShares


async def _drive(daemon: Daemon, workspace: Path, n: int, errors: list[str]) -> None:
    try:
        await _drive_one(daemon, workspace, n, errors)
    except Exception as exc:  # an error of this session, counted; the others go on
        errors.append(f"session {n}: {exc!r}")


async def _drive_one(daemon: Daemon, workspace: Path, n: int, errors: list[str]) -> None:
    url = urlsplit(daemon.url)
    host, port = url.hostname or "127.0.0.1", url.port or 80
    async with Connection(host, port, TOKEN) as connection:
        created = await connection.send("POST", "/v1/sessions", {"workspace": str(workspace)})
        if created.status not in (200, 201):
            errors.append(f"session {n}: create {created.status}")
            return
        answer = created.json()
        assert isinstance(answer, dict)
        sid = answer["session_id"]
        async with EventStream(host, port, TOKEN, f"/v1/sessions/{sid}/events") as events:
            response = await connection.send(
                "POST",
                f"/v1/sessions/{sid}/turns",
                {
                    "client_request_id": f"load-{n}",
                    "input": [{"type": "text", "text": f"load-session-{n}: read the notes"}],
                },
            )
            if response.status != 202:
                errors.append(f"session {n}: turn {response.status} {response.body[:200]!r}")
                return
            turn = response.json()
            assert isinstance(turn, dict)
            async with asyncio.timeout(300):
                update = await events.turn_finished(turn["turn_id"])
    outcome = update.get("outcome", {})
    if not isinstance(outcome, dict) or outcome.get("status") != "completed":
        errors.append(f"session {n}: turn ended {outcome}")


def _gaps(fakes: Fakes) -> tuple[list[float], dict[str, int]]:
    """The fakes write one line per answered request (line-buffered: it is on disk before the
    daemon can see the answer's end)."""
    by_session: dict[str, list[tuple[int, float, float]]] = {}
    for path in fakes.log.parent.glob(f"{fakes.log.name}.*"):
        for line in path.read_text().splitlines():
            session, results, arrived, sent = line.split()
            by_session.setdefault(session, []).append((int(results), float(arrived), float(sent)))
    gaps: list[float] = []
    counts: dict[str, int] = {}
    for session, calls in by_session.items():
        calls.sort()
        counts[session] = len(calls)
        gaps.extend((b[1] - a[2]) * 1000 for a, b in itertools.pairwise(calls))
    return gaps, counts


async def _run(
    daemons: list[Daemon], fakes: Fakes, workspace: Path, sessions: int, database: str
) -> RunResult:
    fakes.reset_log()
    errors: list[str] = []
    before = _cpu_snapshot(daemons, fakes, database)
    start = time.monotonic()
    async with asyncio.TaskGroup() as group:
        for n in range(sessions):
            group.create_task(_drive(daemons[n % len(daemons)], workspace, n, errors))
    wall = time.monotonic() - start
    after = _cpu_snapshot(daemons, fakes, database)
    gaps, counts = _gaps(fakes)
    for n in range(sessions):
        if counts.get(str(n), 0) != CALLS:
            errors.append(f"session {n}: {counts.get(str(n), 0)} model calls, not {CALLS}")
    cpu = CpuShares(
        daemons=after.daemons - before.daemons,
        postgres=sum(cpu - before.postgres.get(pid, 0.0) for pid, cpu in after.postgres.items()),
        fakes=after.fakes - before.fakes,
        client=after.client - before.client,
        server=after.server - before.server,
    )
    return RunResult(
        errors, wall, sum(counts.values()), gaps, [_hwm_kib(d.process.pid) for d in daemons], cpu
    )


def _print(label: str, result: RunResult) -> float:
    rate = result.calls / result.wall_s
    gaps = sorted(result.gaps_ms) or [float("nan")]
    p99 = gaps[min(len(gaps) - 1, int(len(gaps) * 0.99))]
    print(f"{label}:")
    print(f"  errors                 {len(result.errors):8d}")
    for e in result.errors[:5]:
        print(f"    {e}")
    print(f"  model calls            {result.calls:8d} in {result.wall_s:.1f} s")
    print(f"  calls per second       {rate:8.1f}")
    print(
        f"  gap p50                {statistics.median(gaps):8.1f} ms   (queueing: sessions × cost)"
    )
    print(f"  gap p99                {p99:8.1f} ms")
    for i, hwm in enumerate(result.hwm_kib):
        print(f"  peak RSS daemon {i + 1}      {hwm / 1024:8.1f} MiB")
    per_call = 1000 / max(result.calls, 1)
    cpu = result.cpu
    print(
        f"  CPU per call           {cpu.total * per_call:8.2f} ms: daemons {cpu.daemons * per_call:.2f}, "
        f"postgres {cpu.postgres * per_call:.2f}, fakes {cpu.fakes * per_call:.2f}, "
        f"load client {cpu.client * per_call:.2f}"
    )
    print(
        f"  postgres, whole server {cpu.server * per_call:8.2f} ms   (every postgres process,"
        " other databases' work on a shared server included)"
    )
    print(f"  cores busy             {cpu.total / result.wall_s:8.2f} of {os.cpu_count()}")
    return rate


def _ceiling(one: RunResult, daemons: int) -> float:
    """Throughput ratio the machine allows ``daemons`` daemons over one, from the one-daemon run's
    CPU per call: each daemon runs on at most one core, and all parties share the machine's cores.
    """
    cores = os.cpu_count() or 1
    per_daemon = one.cpu.daemons / one.calls
    per_call = one.cpu.total / one.calls

    def rate(n: int) -> float:
        return min(n / per_daemon, cores / per_call)

    return rate(daemons) / rate(1)


def _database(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


async def main(sessions: int, fake_count: int, alone_only: bool) -> None:
    cluster = await find_cluster()
    await cluster.create_template()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = root / "ws"
        workspace.mkdir()
        for i in range(CALLS):
            (workspace / f"notes-{i}.txt").write_text(f"some notes {i}\n" * 20)
        fakes = await _start_fakes(fake_count, root)
        try:
            limit = await _fake_limit(fakes)
            print(f"fake server ({fake_count} processes): {limit:8.1f} requests/s on its own")
            env = {
                "OPENWORK_PROVIDER": "openai-chat",
                "OPENWORK_PROVIDER_BASE_URL": fakes.base_url,
                "OPENWORK_PROVIDER_API_KEY": "fake-key",
                "OPENWORK_MODEL": "fake-model",
                "OPENWORK_MODEL_CONTEXT_WINDOW": "200000",
                "OPENWORK_MODEL_MAX_OUTPUT_TOKENS": "32000",
                "OPENWORK_LOG_LEVEL": "warning",
            }
            url = await cluster.new_database()
            database = _database(url)
            single = await start_daemon(home=root / "home-single", database_url=url, env=env)
            gaps, errors = [], 0
            try:
                # warm-up: imports, first connections
                await _run([single], fakes, workspace, 1, database)
                cpu_before = _cpu_s(single.process.pid)
                for _ in range(ALONE_SESSIONS):  # one after the other: each session alone
                    alone = await _run([single], fakes, workspace, 1, database)
                    gaps += alone.gaps_ms
                    errors += len(alone.errors)
                cpu_per_call = (_cpu_s(single.process.pid) - cpu_before) / (ALONE_SESSIONS * CALLS)
            finally:
                await single.stop()
            gaps.sort()
            print(f"one session alone ({ALONE_SESSIONS} × {CALLS} calls, {errors} errors):")
            print(f"  gap p50                {statistics.median(gaps):8.1f} ms   (goal ≤ 10)")
            print(f"  gap max                {gaps[-1]:8.1f} ms")
            print(
                f"  daemon CPU per call    {cpu_per_call * 1e3:8.1f} ms   (user + system time of"
                " the daemon ÷ model calls, its sessions' whole turns: steadier than the gap on"
                " a busy machine)"
            )
            rates: list[float] = []
            results: list[RunResult] = []
            for count in () if alone_only else (1, 2):
                url = await cluster.new_database()
                daemons = [
                    await start_daemon(home=root / f"home-{count}-{i}", database_url=url, env=env)
                    for i in range(count)
                ]
                try:
                    result = await _run(daemons, fakes, workspace, sessions, _database(url))
                finally:
                    for d in daemons:
                        with contextlib.suppress(Exception):
                            await d.stop()
                rate = _print(
                    f"{'one daemon' if count == 1 else 'two daemons, one database'}: "
                    f"{sessions} sessions × {CALLS} calls",
                    result,
                )
                rates.append(rate)
                results.append(result)
                print(f"  fake limit ÷ served    {limit / rate:8.1f}   (≫ 1: not the bottleneck)")
            if rates:
                print(
                    f"two daemons ÷ one        {rates[1] / rates[0]:8.2f}   (goal ≥ 1.8 on 2 cores)"
                )
                print(
                    f"  machine's ceiling      {_ceiling(results[0], 2):8.2f}   (the one-daemon run's "
                    "CPU per call: daemon on one core, everyone on all cores)"
                )
            print(f"cores: {os.cpu_count()}")
        finally:
            await _stop_fakes(fakes)
    await cluster.drop_all()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--fakes", type=int, default=2)
    parser.add_argument("--alone-only", action="store_true", help="only the one-session gap")
    args = parser.parse_args()
    # uvloop, as the daemon and the fakes: the load client's CPU is counted, not measured
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(main(args.sessions, args.fakes, args.alone_only))
