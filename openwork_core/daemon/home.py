"""The daemon's home (``OPENWORK_HOME``): one daemon per home, its secrets in one place.

Layout (daemon-api.md §1): the home itself is 0700; ``daemon.json`` (URL, bearer token, pid,
version; 0600) is at its top, where the spec puts it; ``run/`` (0700) holds ``daemon.lock`` and
the runtime API keys; ``pgdata/`` the embedded PostgreSQL. The whole home is hidden from every
tool except a session's own spill dir (``ToolSessionContext.secret_dirs``).

``HomeLock`` is an exclusive ``flock`` held for the process lifetime: a second daemon on the same
home learns the first one's pid and URL and leaves without touching anything."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path

RUN_DIR = "run"
DISCOVERY_FILE = "daemon.json"
LOCK_FILE = "daemon.lock"


def private_home(home: Path) -> Path:
    """``home``, created if missing and made 0700 (it holds the daemon's token and keys)."""
    home.mkdir(parents=True, exist_ok=True)
    os.chmod(home, 0o700)
    return home


def run_dir(home: Path) -> Path:
    """``home/run``, created 0700 (the lock and the runtime keys)."""
    path = private_home(home) / RUN_DIR
    path.mkdir(exist_ok=True)
    os.chmod(path, 0o700)
    return path


def discovery_path(home: Path) -> Path:
    """``OPENWORK_HOME/daemon.json`` (daemon-api.md §1 discovery)."""
    return home / DISCOVERY_FILE


@dataclass(frozen=True, slots=True)
class Discovery:
    url: str
    token: str
    pid: int


def read_discovery(home: Path) -> Discovery | None:
    """The running daemon's URL, token and pid, or ``None`` when none was written."""
    try:
        payload = json.loads(discovery_path(home).read_text())
        return Discovery(
            url=str(payload["url"]), token=str(payload["token"]), pid=int(payload["pid"])
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_discovery(home: Path, url: str, token: str, version: str) -> Path:
    """Atomically write ``daemon.json`` (0600, created so: never readable by others) in the
    0700 home."""
    directory = private_home(home)
    path = discovery_path(home)
    tmp = directory / f".{DISCOVERY_FILE}.{os.getpid()}"
    payload = {"url": url, "token": token, "pid": os.getpid(), "version": version}
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(payload, handle)
    os.replace(tmp, path)
    os.chmod(path, 0o600)
    return path


def remove_discovery(home: Path, url: str) -> None:
    """Remove ``daemon.json`` only when it is still this daemon's (names ``url`` and our pid)."""
    found = read_discovery(home)
    if found is not None and found.url == url and found.pid == os.getpid():
        with contextlib.suppress(FileNotFoundError):
            discovery_path(home).unlink()


class HomeInUse(Exception):
    """Another daemon holds this home."""

    def __init__(self, home: Path, pid: int | None, url: str | None) -> None:
        self.home, self.pid, self.url = home, pid, url
        where = url or "still starting"
        super().__init__(
            f"another openwork daemon is running for OPENWORK_HOME={home}: pid {pid or '?'}, {where}"
        )


class HomeLock:
    """``flock(LOCK_EX | LOCK_NB)`` on ``run/daemon.lock``, holding our pid; released when the
    process ends, however it ends (the kernel drops the lock with the descriptor)."""

    def __init__(self, home: Path) -> None:
        self._home = home
        self._fd: int | None = None

    def acquire(self) -> None:
        path = run_dir(self._home) / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _read_pid(fd)
            os.close(fd)
            found = read_discovery(self._home)
            url = found.url if found is not None and found.pid == pid else None
            raise HomeInUse(self._home, pid, url) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _read_pid(fd: int) -> int | None:
    try:
        return int(os.pread(fd, 32, 0).decode().strip() or "0") or None
    except (OSError, ValueError):
        return None
