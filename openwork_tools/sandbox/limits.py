"""The bounds of one command tree and the result line that says one was hit (issue 22 point 5).

Every limit is set inside the sandbox by the shell that then runs the command (``prelude``), soft
and hard at once, so nothing the command starts can raise it again:

- memory: ``RLIMIT_DATA`` (heap and private mappings) per process, ``OPENWORK_SANDBOX_MEMORY_MB``;
  ``-d`` rather than ``-v`` so runtimes that reserve large address ranges (V8, the JVM, Go) work;
- processes: ``RLIMIT_NPROC``, ``OPENWORK_SANDBOX_MAX_PROCESSES``: counted per user namespace,
  so per command tree; the kernel never enforces it for uid 0, which is why a daemon running as
  root also puts the tree in a cgroup when it can (``sandbox.cgroup``);
- file size: ``RLIMIT_FSIZE``, ``OPENWORK_SANDBOX_MAX_FILE_MB`` (a bigger write gets ``SIGXFSZ``);
- CPU time: ``RLIMIT_CPU`` of the call's timeout (the wall time is bounded by ``timeoutMs``).

A limit the daemon already has lower stays: ``ulimit`` cannot raise it and fails quietly.
"""

from __future__ import annotations

import enum
import signal

from openwork_tools.policy import SandboxSettings

NOT_STARTED_EXIT = 97
"""The prelude's exit status when it cannot say the command is starting: it then never runs it."""


def prelude(settings: SandboxSettings, timeout_s: float, started_fd: int) -> str:
    """The ``bash -c`` script that says on ``started_fd`` that the sandbox is up (one byte, then
    the descriptor is closed, so the command never holds it), sets the limits, then runs the
    command given as ``$1``. Without that byte the command did not run (``sandbox.launch``)."""
    limits = (
        f"-d {settings.memory_mb * 1024}",
        f"-u {settings.max_processes}",
        f"-f {settings.max_file_mb * 1024}",
        f"-t {max(1, int(timeout_s) + 1)}",
    )
    sets = "; ".join(f"ulimit -S -H {flag} 2>/dev/null" for flag in limits)
    started = f"{{ printf 1 >&{started_fd}; }} 2>/dev/null || exit {NOT_STARTED_EXIT}"
    return f'{started}; exec {started_fd}>&-; {sets}; exec /bin/bash -c "$1"'


class LimitHit(enum.Enum):
    MEMORY = "memory"
    PROCESSES = "processes"
    FILE_SIZE = "file_size"


MEMORY_MARKERS = (
    "cannot allocate memory",
    "memoryerror",
    "out of memory",
    "bad_alloc",
    "memory allocation of",
)
"""How a refused allocation shows in the output (strerror(ENOMEM), Python, Go/V8/C, C++,
Rust): the same kind of evidence as the kernel-denial marker (permissions-sandbox.md §6)."""
PROCESS_MARKERS = ("fork: retry", "fork: resource temporarily unavailable", "can't fork")


def limit_text(hit: LimitHit, settings: SandboxSettings) -> str:
    """The fixed line appended after the status line (docs/tools.md)."""
    if hit is LimitHit.MEMORY:
        return f"[sandbox: the command exceeded the memory limit of {settings.memory_mb} MB]"
    if hit is LimitHit.PROCESSES:
        return f"[sandbox: the command exceeded the process limit of {settings.max_processes}]"
    return f"[sandbox: the command exceeded the file size limit of {settings.max_file_mb} MB]"


def limits_hit(
    capped_output: str, exit_code: int | None, *, failed: bool, measured: frozenset[LimitHit]
) -> list[LimitHit]:
    """The limits this run hit: ``measured`` ones (the cgroup's counters), a ``SIGXFSZ`` exit,
    and, for a run that failed (non-zero exit or timeout), the markers in its capped output."""
    text = capped_output.lower()
    hits = set(measured)
    if exit_code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ):
        hits.add(LimitHit.FILE_SIZE)
    if failed and any(marker in text for marker in MEMORY_MARKERS):
        hits.add(LimitHit.MEMORY)
    if failed and any(marker in text for marker in PROCESS_MARKERS):
        hits.add(LimitHit.PROCESSES)
    return [hit for hit in LimitHit if hit in hits]
