"""``openwork status``, ``openwork stop`` and ``openwork logs [-f]``."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import typer
from pydantic import JsonValue

from openwork_core.cli.client import (
    DaemonClient,
    DaemonNotRunning,
    home,
    objects,
    process_alive,
    read_discovery,
)
from openwork_core.cli.errors import CliError
from openwork_core.cli.output import console, print_json, visible
from openwork_core.logs import LOG_FILE_NAME

STOP_TIMEOUT_S = 20.0
FOLLOW_POLL_S = 0.25


def register(app: typer.Typer) -> None:
    app.command()(status)
    app.command()(stop)
    app.command()(logs)


def status(json_output: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Show the running daemon: URL, pid, version, database, sessions."""
    discovery = read_discovery(home())
    with DaemonClient(discovery) as client:
        health = client.get("/v1/health")
        listed = client.get("/v1/sessions")
    sessions = objects(listed, "sessions")
    running: list[JsonValue] = [
        s.get("session_id") for s in sessions if s.get("status") == "running"
    ]
    report: dict[str, JsonValue] = {
        "running": True,
        "url": discovery.url,
        "pid": discovery.pid,
        "version": discovery.version,
        "discovery": str(discovery.path),
        "health": health,
        "sessions": len(sessions),
        "running_sessions": running,
    }
    if json_output:
        print_json(report)
        return
    database = health.get("database") if isinstance(health, dict) else None
    out = console()
    for line in (
        f"running  {discovery.url} (pid {discovery.pid}, version {discovery.version})",
        f"database {database}",
        f"sessions {len(sessions)} ({len(running)} with a running turn)",
    ):
        out.print(line, markup=False)


def stop() -> None:
    """Stop the daemon and wait until it is gone.

    Running turns end cancelled."""
    discovery = read_discovery(home())
    if not process_alive(discovery.pid):
        raise DaemonNotRunning(f"the daemon (pid {discovery.pid}) is not running")
    os.kill(discovery.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while process_alive(discovery.pid) and discovery.path.exists():
        if time.monotonic() > deadline:
            raise CliError(f"the daemon (pid {discovery.pid}) did not stop within 20 s", "timeout")
        time.sleep(0.1)  # waiting on another process: no event to await
    console().print(f"stopped the daemon (pid {discovery.pid})", markup=False)


def render_log_line(raw: str) -> str:
    """A JSON log line as ``time level event key=value …``; other lines as they are."""
    try:
        event = json.loads(raw)
    except ValueError:
        return raw
    if not isinstance(event, dict):
        return raw
    stamp = str(event.pop("timestamp", ""))[:23].replace("T", " ")
    level = str(event.pop("level", "")).upper()
    name = str(event.pop("event", ""))
    rest = " ".join(f"{k}={v}" for k, v in event.items())
    return f"{stamp} {level:<7} {name} {rest}".rstrip()


def _follow(path: Path, start: int) -> Iterator[str]:
    """Lines appended after ``start``; starts over when the file is rotated (shrinks)."""
    offset = start
    pending = ""
    while True:
        size = path.stat().st_size if path.exists() else 0
        if size < offset:
            offset = 0
        if size > offset:
            with path.open("r", encoding="utf-8", errors="replace") as handle:
                handle.seek(offset)
                pending += handle.read()
                offset = handle.tell()
            *complete, pending = pending.split("\n")
            yield from complete
        else:
            time.sleep(FOLLOW_POLL_S)  # tail -f: poll the file


def logs(
    follow: bool = typer.Option(False, "--follow", "-f", help="Keep printing new lines."),
    lines: int = typer.Option(50, "--lines", "-n", help="How many of the last lines."),
    json_output: bool = typer.Option(False, "--json", help="The raw JSON lines."),
) -> None:
    """Print the daemon's log; -f follows it.

    The log: OPENWORK_HOME/logs/openwork.log."""
    path = home() / "logs" / LOG_FILE_NAME
    if not path.exists():
        raise CliError(f"no log file at {path} (the daemon has not run here yet)", "no_logs")
    raw = path.read_bytes()
    data = raw.decode("utf-8", errors="replace")
    tail = [line for line in data.split("\n") if line][-lines:] if lines > 0 else []
    out = console()

    def show(line: str) -> None:
        shown = line if json_output else render_log_line(line)
        out.print(visible(shown), markup=False, highlight=False)

    for line in tail:
        show(line)
    if follow:
        try:
            for line in _follow(path, len(raw)):
                if line:
                    show(line)
        except KeyboardInterrupt:
            raise typer.Exit(0) from None
