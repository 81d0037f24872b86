"""The sandbox self-check, run once per process (permissions-sandbox.md §2, DESIGN.md §2).

Available only when bwrap exists and, under the same isolation every bash call gets
(``bwrap.isolation_args``: user namespace, no capabilities, seccomp, no network), lets a write
through a writable bind, really denies a write to a path bound read-only, shows zero
capabilities (``CapEff``, ``CapPrm``, ``CapBnd``), an active seccomp filter and no network
interface but loopback. A kernel or container that refuses user namespaces makes bwrap fail here,
so the verdict is "unavailable" with bwrap's own reason. The verdict is cached for the process
lifetime.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path

from openwork_tools.modes import SandboxStatus
from openwork_tools.sandbox.bwrap import SECCOMP_FD_ARG, isolation_args
from openwork_tools.sandbox.cgroup import find_parents
from openwork_tools.sandbox.seccomp import native_program, program_descriptor

PROBE_TIMEOUT_S = 15.0
DENIAL_MARKERS = ("read-only file system", "operation not permitted", "permission denied")
_SCRIPT = (
    'echo probe-started; echo ok > "$1/ok"; echo denied > "$2/denied"; '
    "grep -E '^(CapEff|CapPrm|CapBnd|Seccomp):' /proc/self/status; echo net-devices; cat /proc/net/dev; exit 0"
)

_verdict: SandboxStatus | None = None


async def probe_sandbox(bwrap_path: str | None = None) -> SandboxStatus:
    """The cached verdict; the first call runs the self-check."""
    global _verdict
    if _verdict is None:
        _verdict = await run_self_check(bwrap_path or shutil.which("bwrap"))
    return _verdict


async def run_self_check(bwrap_path: str | None) -> SandboxStatus:
    """Uncached: one bwrap run that must write ``rw/ok``, be denied ``ro/denied`` and report
    the isolation it runs under."""
    if not bwrap_path or not await asyncio.to_thread(os.access, bwrap_path, os.X_OK):
        return SandboxStatus(False, "bubblewrap (bwrap) is not installed")
    program = native_program()
    if program is None:
        return SandboxStatus(False, "no seccomp filter is defined for this machine's architecture")
    base = Path(await asyncio.to_thread(_make_dirs))
    try:
        return await _check(bwrap_path, base, program)
    finally:
        await asyncio.to_thread(shutil.rmtree, base, True)


def _make_dirs() -> str:
    base = tempfile.mkdtemp(prefix="openwork-probe-")
    os.mkdir(os.path.join(base, "rw"))
    os.mkdir(os.path.join(base, "ro"))
    return base


def _written(rw: Path, ro: Path) -> tuple[bool, bool]:
    return (rw / "ok").exists(), (ro / "denied").exists()


def isolation_problem(report: str) -> str | None:
    """What the sandbox's own report (``/proc/self/status`` lines, then ``/proc/net/dev`` after a
    ``net-devices`` line) shows missing, or ``None`` when capabilities are zero, seccomp filters and only loopback exists."""
    fields = dict(
        (key.strip(), value.strip())
        for key, sep, value in (line.partition(":") for line in report.splitlines())
        if sep and key.strip() in ("CapEff", "CapPrm", "CapBnd", "Seccomp")
    )
    for cap in ("CapEff", "CapPrm", "CapBnd"):
        if fields.get(cap, "").strip("0") or cap not in fields:
            return f"the sandbox kept capabilities ({cap} {fields.get(cap, 'unknown')})"
    if fields.get("Seccomp") != "2":
        return "the seccomp filter is not active"
    devices = report.partition("net-devices\n")[2].splitlines()
    interfaces = [line.partition(":")[0].strip() for line in devices if "|" not in line]
    if not interfaces or any(name != "lo" for name in interfaces):
        return "the sandbox shares the host's network"
    return None


async def _check(bwrap: str, base: Path, program: bytes) -> SandboxStatus:
    rw, ro = base / "rw", base / "ro"
    fd = await asyncio.to_thread(program_descriptor, program)
    argv = [
        bwrap,
        *(str(fd) if a == SECCOMP_FD_ARG else a for a in isolation_args(network=False)),
        *("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"),
        *("--bind", str(rw), str(rw), "--", "/bin/sh", "-c", _SCRIPT, "sh", str(rw), str(ro)),
    ]
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            pass_fds=(fd,),
        )
    except OSError as exc:
        return SandboxStatus(False, f"bwrap could not be started: {exc.strerror or exc}")
    finally:
        os.close(fd)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), PROBE_TIMEOUT_S)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return SandboxStatus(False, "the sandbox self-check timed out")
    text = out.decode(errors="replace")
    if "probe-started" not in text:
        first = text.strip().splitlines()[0] if text.strip() else f"exit {proc.returncode}"
        return SandboxStatus(False, f"bwrap failed its self-check: {first}")
    allowed_written, denied_written = await asyncio.to_thread(_written, rw, ro)
    if not allowed_written:
        return SandboxStatus(False, "bwrap failed its self-check: a writable bind was not writable")
    if denied_written or not any(m in text.lower() for m in DENIAL_MARKERS):
        return SandboxStatus(False, "bwrap failed its self-check: a forbidden write succeeded")
    problem = isolation_problem(text)
    if problem is not None:
        return SandboxStatus(False, f"bwrap failed its self-check: {problem}")
    return SandboxStatus(True)


def root_note(euid: int, cgroup_available: bool) -> str | None:
    """The one line the banner and ``doctor`` show for a daemon running as root (issue 22
    point 1), or ``None`` for any other uid."""
    if euid != 0:
        return None
    inside = (
        "the daemon runs as root: bash is root only inside its own user namespace, with no "
        "capabilities, no mounts and no view of this daemon's home"
    )
    if cgroup_available:
        return f"{inside}; each command tree gets its own cgroup (process and memory limits)"
    return (
        f"{inside}; no cgroup can be made here and the kernel does not count root's processes, "
        "so OPENWORK_SANDBOX_MAX_PROCESSES does not hold: run the daemon as a normal user"
    )


def current_root_note() -> str | None:
    """Blocking: ``root_note`` for this process."""
    return root_note(os.geteuid(), find_parents() is not None)
