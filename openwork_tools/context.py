"""Session and call contexts (tools.md §1, §4, §5)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeAlias

from openwork_tools.modes import SandboxStatus
from openwork_tools.policy import SandboxPolicy, SandboxSettings
from openwork_tools.sandbox.gitdir import linked_git_dirs

HOST_ENV_KEYS = ("PATH", "HOME", "SHELL", "LANG", "LC_ALL", "TMPDIR")
"""The only variables copied from the host process into tool processes (tools.md §4)."""

CREDENTIAL_PATHS = (
    # keys and cloud credentials
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".password-store",
    ".local/share/keyrings",
    ".pki",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".config/op",
    ".config/rclone",
    ".s3cfg",
    ".boto",
    # package registries, git hosts and databases
    ".netrc",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".gem/credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh",
    ".config/hub",
    ".config/glab-cli",
    ".pgpass",
    ".my.cnf",
    # browser profiles
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".config/vivaldi",
    ".config/opera",
    # other coding agents and this daemon's own configuration
    ".codex",
    ".claude",
    ".claude.json",
    ".config/claude",
    ".config/opencode",
    ".local/share/opencode",
    ".gemini",
    ".cursor",
    ".config/Cursor",
    ".aider.conf.yml",
    ".continue",
    ".config/github-copilot",
    ".config/openwork",
    # system secrets (absolute)
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
)
"""The ``credential`` tier (permissions-sandbox.md §1, §5): paths under ``home`` unless absolute,
directories and files alike. Defined once: the file tools refuse to read, list or search them
without a card (``paths.is_credential``) and bash sees each one masked (an empty tmpfs for a
directory, ``/dev/null`` for a file; ``sandbox.bwrap``)."""


def default_credential_paths(home: Path) -> tuple[Path, ...]:
    return tuple(home / name for name in CREDENTIAL_PATHS)


def host_environment() -> dict[str, str]:
    return {k: v for k in HOST_ENV_KEYS if (v := os.environ.get(k)) is not None}


SESSION_TEMP_DIR = "tmp"
"""The session's own temp dir, ``<spill dir>/tmp``: removed with the session and swept with its
spill files; bash sees it as ``/tmp`` (the host's ``/tmp`` is never shown)."""


class FileObservations:
    """Real path -> SHA-256 of the content last read or written by the model (tools.md §7.4)."""

    def __init__(self) -> None:
        self._hashes: dict[Path, str] = {}

    def record(self, real: Path, sha256: str) -> None:
        self._hashes[real] = sha256

    def get(self, real: Path) -> str | None:
        return self._hashes.get(real)

    def __len__(self) -> int:
        return len(self._hashes)


class WriteLocks:
    """One ``asyncio.Lock`` per real path, shared by write and edit."""

    def __init__(self) -> None:
        self._locks: dict[Path, asyncio.Lock] = {}

    def for_path(self, real: Path) -> asyncio.Lock:
        lock = self._locks.get(real)
        if lock is None:
            lock = self._locks[real] = asyncio.Lock()
        return lock


def _canonical(path: Path) -> Path:
    """The real path of a credential path; a symlinked one is masked at both names' target."""
    return Path(os.path.realpath(path))


def _xdg_runtime() -> tuple[Path, ...]:
    value = os.environ.get("XDG_RUNTIME_DIR")
    return (Path(value),) if value and os.path.isabs(value) else ()


class ToolSessionContext:
    """What every tool call of one session shares; no mode, ids, cancel token or DB in here.

    Paths are canonicalised once here (the workspace, home, protected roots, credential and temp
    dirs) so the fence compares real paths. Core keeps the observation table and spill dir per
    session and passes the same ones when rebuilding a toolset (``observations=``,
    ``write_locks=``).
    """

    def __init__(
        self,
        *,
        working_directory: Path,
        sandbox: SandboxStatus,
        spill_dir: Path | None = None,
        home: Path | None = None,
        protected_roots: tuple[Path, ...] = (),
        credential_paths: tuple[Path, ...] | None = None,
        secret_dirs: tuple[Path, ...] = (),
        environment: Mapping[str, str] | None = None,
        temp_dirs: tuple[Path, ...] | None = None,
        observations: FileObservations | None = None,
        write_locks: WriteLocks | None = None,
        bwrap_path: str = "/usr/bin/bwrap",
        settings: SandboxSettings | None = None,
        runtime_dirs: tuple[Path, ...] | None = None,
    ) -> None:
        self.working_directory = working_directory.resolve()
        self.sandbox = sandbox
        self.settings = settings if settings is not None else SandboxSettings()
        self.spill_dir = spill_dir.resolve() if spill_dir is not None else None
        self.home = (home if home is not None else Path.home()).resolve()
        extra = (self.spill_dir,) if self.spill_dir is not None else ()
        self.protected_roots = tuple(p.resolve() for p in (*protected_roots, *extra))
        creds = credential_paths
        if creds is None:
            creds = default_credential_paths(self.home)
        self.secret_dirs = tuple(p.resolve() for p in secret_dirs)
        """The daemon's own directory (``OPENWORK_HOME``: token, keys, database, logs, other
        sessions' spill files): no tool reads, lists, searches or writes it under any mode or
        grant, and bash does not see it — except this session's own spill dir, the model's own
        output, which stays readable, and its temp dir."""
        self.credential_paths = tuple(_canonical(p) for p in creds)
        env = dict(environment) if environment is not None else host_environment()
        self.environment: Mapping[str, str] = {k: env[k] for k in HOST_ENV_KEYS if k in env}
        if temp_dirs is None:
            temp_dirs = (self.spill_dir / SESSION_TEMP_DIR,) if self.spill_dir is not None else ()
        self.temp_dirs = tuple(p.resolve() for p in temp_dirs)
        """The first is the session's own temp dir (bash's ``/tmp``); the file tools write them."""
        self.runtime_dirs = tuple(runtime_dirs if runtime_dirs is not None else _xdg_runtime())
        """Per-user runtime dirs beyond ``sandbox.bwrap.RUNTIME_DIRS`` (``$XDG_RUNTIME_DIR``)."""
        self.git_dirs = linked_git_dirs(self.working_directory)
        """The git directory a ``.git`` file of the workspace names, and its common dir."""
        self.observations = observations if observations is not None else FileObservations()
        self.write_locks = write_locks if write_locks is not None else WriteLocks()
        self.bwrap_path = bwrap_path

    @property
    def temp_dir(self) -> Path | None:
        return self.temp_dirs[0] if self.temp_dirs else None

    def prepare_temp_dir(self) -> None:
        """Blocking: create the session's temp dir (0700) if it is missing."""
        if self.temp_dir is not None:
            self.temp_dir.mkdir(mode=0o700, parents=True, exist_ok=True)

    def display_path(self, real: Path) -> str:
        """Relative to the workspace when inside it, else absolute."""
        if real == self.working_directory:
            return "."
        if self.working_directory in real.parents:
            return str(real.relative_to(self.working_directory))
        return str(real)


@dataclass(frozen=True, slots=True)
class StdoutProgress:
    chunk: str
    kind: Literal["stdout"] = "stdout"


@dataclass(frozen=True, slots=True)
class StderrProgress:
    chunk: str
    kind: Literal["stderr"] = "stderr"


@dataclass(frozen=True, slots=True)
class MessageProgress:
    message: str
    kind: Literal["message"] = "message"


ToolProgress: TypeAlias = StdoutProgress | StderrProgress | MessageProgress
ProgressSink: TypeAlias = Callable[[ToolProgress], object]


def queue_sink(queue: asyncio.Queue[ToolProgress]) -> ProgressSink:
    """A try-send sink: a full queue drops the update."""

    def send(item: ToolProgress) -> None:
        with contextlib.suppress(asyncio.QueueFull):
            queue.put_nowait(item)

    return send


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallContext:
    """Per call: id, this call's policy, cancel token (child of the Turn's), deadline, progress.

    ``deadline`` is a ``time.monotonic()`` instant (the event loop's clock).
    """

    call_id: str
    policy: SandboxPolicy = field(default_factory=SandboxPolicy)
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    deadline: float | None = None
    progress: ProgressSink | None = None

    def send_progress(self, item: ToolProgress) -> None:
        """Try-send; a failing or closed sink never affects the result."""
        if self.progress is None:
            return
        try:
            self.progress(item)
        except Exception:  # progress is best effort by contract
            return

    def remaining(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())
