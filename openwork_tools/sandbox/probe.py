"""The sandbox self-check, run once per process (permissions-sandbox.md §2, DESIGN.md §2).

Available only when bwrap exists, runs, lets a write through a writable bind, and really denies
a write to a path that is bound read-only. The verdict is cached for the process lifetime.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path

from openwork_tools.modes import SandboxStatus

PROBE_TIMEOUT_S = 15.0
DENIAL_MARKERS = ("read-only file system", "operation not permitted", "permission denied")
_SCRIPT = 'echo probe-started; echo ok > "$1/ok"; echo denied > "$2/denied"; exit 0'

_verdict: SandboxStatus | None = None


async def probe_sandbox(bwrap_path: str | None = None) -> SandboxStatus:
    """The cached verdict; the first call runs the self-check."""
    global _verdict
    if _verdict is None:
        _verdict = await run_self_check(bwrap_path or shutil.which("bwrap"))
    return _verdict


async def run_self_check(bwrap_path: str | None) -> SandboxStatus:
    """Uncached: one bwrap run that must write ``rw/ok`` and be denied ``ro/denied``."""
    if not bwrap_path or not await asyncio.to_thread(os.access, bwrap_path, os.X_OK):
        return SandboxStatus(False, "bubblewrap (bwrap) is not installed")
    base = Path(await asyncio.to_thread(_make_dirs))
    try:
        return await _check(bwrap_path, base)
    finally:
        await asyncio.to_thread(shutil.rmtree, base, True)


def _make_dirs() -> str:
    base = tempfile.mkdtemp(prefix="openwork-probe-")
    os.mkdir(os.path.join(base, "rw"))
    os.mkdir(os.path.join(base, "ro"))
    return base


def _written(rw: Path, ro: Path) -> tuple[bool, bool]:
    return (rw / "ok").exists(), (ro / "denied").exists()


async def _check(bwrap: str, base: Path) -> SandboxStatus:
    rw, ro = base / "rw", base / "ro"
    argv = [
        bwrap,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--bind",
        str(rw),
        str(rw),
        "--die-with-parent",
        "--unshare-pid",
        "--",
        "/bin/sh",
        "-c",
        _SCRIPT,
        "sh",
        str(rw),
        str(ro),
    ]
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return SandboxStatus(False, f"bwrap could not be started: {exc.strerror or exc}")
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
    return SandboxStatus(True)
