"""The embedded PostgreSQL server (pgserver) with its data under OPENWORK_HOME, kept across
restarts. It belongs to the daemon that started it: stopped when that daemon exits. The caller
holds the home lock, so a server still running on the data directory at start is an orphan of a
daemon that was killed; it is stopped deliberately before ours starts — never two servers on one
data directory, never a leaked one."""

from __future__ import annotations

import os
import signal
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, cast

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


def _running(pid: int) -> bool:
    """Alive and not a zombie (in a container without an init nobody reaps the orphan)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def orphan_postmaster_pid(data_dir: Path) -> int | None:
    """The pid of a server still running on ``data_dir`` (``postmaster.pid``), if any."""
    try:
        pid = int((data_dir / "postmaster.pid").read_text().splitlines()[0].strip())
    except (OSError, ValueError, IndexError):
        return None
    return pid if _running(pid) else None


def _wait_exit(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)  # an external process: polled with a bound
    return True


def stop_orphan(data_dir: Path) -> int | None:
    """Stop an orphaned server on ``data_dir`` (fast shutdown, then SIGKILL after 30 s) and
    forget the dead daemons pgserver still counts as its users; returns the orphan's pid."""
    pid = orphan_postmaster_pid(data_dir)
    if pid is not None:
        os.kill(pid, signal.SIGINT)  # PostgreSQL's fast shutdown
        if not _wait_exit(pid, 30):
            os.kill(pid, signal.SIGKILL)
            _wait_exit(pid, 10)
        log.warning("database.embedded_orphan_stopped", pid=pid, data_dir=str(data_dir))
    pid_file = data_dir / "postmaster.pid"
    if pid_file.exists() and orphan_postmaster_pid(data_dir) is None:
        pid_file.unlink()  # left by a server that is gone
    handles = data_dir / ".handle_pids.json"
    if handles.exists():
        handles.unlink()
    return pid


def _import_pgserver() -> Callable[..., _PgServer]:
    """pgserver asks platformdirs for a runtime directory when it is imported, and platformdirs
    warns (``RuntimeDirWarning``) where ``XDG_RUNTIME_DIR`` is unset — a service, a container,
    ``su``: its fallback under the temporary directory is fine, so that warning is no news to the
    user (issue 24 point 6). Other warnings pass."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
        from pgserver import get_server  # type: ignore[attr-defined]
    return cast("Callable[..., _PgServer]", get_server)


def start_embedded_postgres(home: Path) -> EmbeddedPostgres:
    """Start the server in ``home/pgdata`` (stopping an orphan first); data survives the process."""
    get_server = _import_pgserver()

    data_dir = home / "pgdata"
    data_dir.mkdir(parents=True, exist_ok=True)
    stop_orphan(data_dir)
    server = get_server(data_dir, cleanup_mode="stop")
    return EmbeddedPostgres(server)
