"""The embedded PostgreSQL server (pgserver) with its data under OPENWORK_HOME, kept across
restarts. It belongs to the daemon that started it: stopped when that daemon exits. The caller
holds the home lock, so a server still running on the data directory at start is an orphan of a
daemon that was killed; it is stopped deliberately before ours starts — never two servers on one
data directory, never a leaked one."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import structlog

log = structlog.get_logger(__name__)


class _PgServer(Protocol):
    def get_uri(self, database: str | None = None) -> str: ...
    def cleanup(self) -> None: ...


@dataclass
class EmbeddedPostgres:
    server: _PgServer

    @property
    def url(self) -> str:
        return self.server.get_uri()

    def stop(self) -> None:
        self.server.cleanup()


def orphan_postmaster_pid(data_dir: Path) -> int | None:
    """The pid of a server still running on ``data_dir`` (``postmaster.pid``), if any."""
    try:
        pid = int((data_dir / "postmaster.pid").read_text().splitlines()[0].strip())
        os.kill(pid, 0)
    except (OSError, ValueError, IndexError):
        return None
    return pid


def stop_orphan(data_dir: Path) -> int | None:
    """Stop an orphaned server on ``data_dir`` (fast shutdown) and forget the dead daemons that
    pgserver still counts as its users; returns the orphan's pid."""
    pid = orphan_postmaster_pid(data_dir)
    if pid is not None:
        from pgserver._commands import pg_ctl  # type: ignore[attr-defined]

        user = "pgserver" if os.geteuid() == 0 else None
        try:
            pg_ctl(["-w", "-m", "fast", "stop"], pgdata=data_dir, user=user, timeout=30)
        except Exception:  # the server would not stop politely: end it
            os.kill(pid, signal.SIGKILL)
        log.warning("database.embedded_orphan_stopped", pid=pid, data_dir=str(data_dir))
    handles = data_dir / ".handle_pids.json"
    if handles.exists():
        handles.unlink()
    return pid


def start_embedded_postgres(home: Path) -> EmbeddedPostgres:
    """Start the server in ``home/pgdata`` (stopping an orphan first); data survives the process."""
    from pgserver import get_server  # type: ignore[attr-defined]

    data_dir = home / "pgdata"
    data_dir.mkdir(parents=True, exist_ok=True)
    stop_orphan(data_dir)
    server = get_server(data_dir, cleanup_mode="stop")
    return EmbeddedPostgres(server)
