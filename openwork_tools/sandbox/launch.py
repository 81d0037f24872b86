"""Starting one sandboxed bash command: its command line, its seccomp descriptor and, when the
daemon can make one, its cgroup (issue 22; tools.md §5, §7 bash)."""

from __future__ import annotations

import asyncio
import contextlib
import enum
import errno
import os
import secrets
import signal
from asyncio.subprocess import Process
from dataclasses import dataclass

from openwork_tools.context import ToolSessionContext
from openwork_tools.policy import SandboxPolicy
from openwork_tools.sandbox.bwrap import SECCOMP_FD_ARG, bwrap_argv, sandbox_environment
from openwork_tools.sandbox.cgroup import CommandCgroup
from openwork_tools.sandbox.limits import LimitHit, prelude
from openwork_tools.sandbox.seccomp import native_program, program_descriptor

SETUP_ATTEMPTS = 3
"""How many sandboxes one command gets when bwrap's setup fails before the command runs. The
profile covers every host socket by its path, so a socket (or its directory) removed between the
listing and bwrap's mount fails the setup ("Can't mkdir parents", "Can't create file"); the next
profile is built from a fresh listing. The command never ran in a failed setup (no byte on the
started pipe: ``limits.prelude``), so another attempt cannot run it twice."""


def launch_argv(
    session: ToolSessionContext,
    policy: SandboxPolicy,
    command: str,
    timeout_s: float,
    started_fd: int,
) -> list[str]:
    """Blocking: the session's temp dir made, then the sandboxed command line. A bwrap that is
    not there is an ``OSError`` here, as a failed spawn (the cgroup's shell would only see it
    after it started)."""
    if not os.access(session.bwrap_path, os.X_OK):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), session.bwrap_path)
    session.prepare_temp_dir()
    script = prelude(session.settings, timeout_s, started_fd)
    return bwrap_argv(session, policy, ["/bin/bash", "-c", script, "/bin/bash", command])


class SandboxStart(enum.Enum):
    """What the started pipe said within the command's timeout."""

    UP = "up"
    """The prelude's byte: the command runs."""
    FAILED = "failed"
    """The pipe closed without it: bwrap's setup failed, the command never ran."""
    TIMED_OUT = "timed_out"
    """Nothing yet: the pipe is closed, so the prelude can never say it and never runs the
    command; the tree is the caller's to kill, and the call a timeout."""


@dataclass(slots=True)
class Launched:
    """A started command tree, its cgroup if the daemon could make one, and how its sandbox
    started."""

    proc: Process
    cgroup: CommandCgroup | None
    start: SandboxStart = SandboxStart.UP

    async def release(self) -> frozenset[LimitHit]:
        """The limits its cgroup enforced; then the cgroup is emptied and removed."""
        group = self.cgroup
        if group is None:
            return frozenset()
        self.cgroup = None
        hits = await asyncio.to_thread(group.hits)
        await asyncio.to_thread(group.remove)
        return hits

    async def abandon(self) -> None:
        """Kill the whole tree (its own process group), wait for it, then release the cgroup."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        await self.proc.wait()
        await self.release()


async def spawn(
    session: ToolSessionContext, policy: SandboxPolicy, command: str, timeout_s: float
) -> Launched:
    """Start the command in a fresh sandbox and wait until the sandbox is up. A setup that
    failed before the command ran is built again (``SETUP_ATTEMPTS``); the last failure is
    returned like any exit, bwrap's message as its output. A sandbox not up within
    ``timeout_s`` is returned as ``SandboxStart.TIMED_OUT``: its command will never run."""
    for attempt in range(1, SETUP_ATTEMPTS + 1):
        read_fd, write_fd = os.pipe()
        try:
            launched = await _start(session, policy, command, timeout_s, write_fd)
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        try:
            launched.start = await _started(read_fd, timeout_s)
            if launched.start is not SandboxStart.FAILED or attempt == SETUP_ATTEMPTS:
                return launched
            await launched.proc.wait()
            await launched.release()
        except BaseException:
            await asyncio.shield(launched.abandon())
            raise
    raise AssertionError("unreachable: the last attempt returns")


async def _started(read_fd: int, timeout_s: float) -> SandboxStart:
    """UP once the prelude's byte arrives; FAILED when the pipe closes without it (bwrap's setup
    failed and every holder exited); TIMED_OUT when neither happened within ``timeout_s``. The
    read end is closed on return, so a prelude that had not written yet exits (SIGPIPE) without
    running the command."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    pipe = os.fdopen(read_fd, "rb", buffering=0)
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
    except BaseException:
        pipe.close()
        raise
    try:
        async with asyncio.timeout(timeout_s):
            byte = await reader.read(1)
    except TimeoutError:
        return SandboxStart.TIMED_OUT
    finally:
        transport.close()
    return SandboxStart.UP if byte else SandboxStart.FAILED


async def _start(
    session: ToolSessionContext,
    policy: SandboxPolicy,
    command: str,
    timeout_s: float,
    started_fd: int,
) -> Launched:
    """Start bwrap with the seccomp filter on a descriptor only the child inherits, and the
    started pipe's write end. With a cgroup, a shell first waits on its stdin until its pid is in
    the cgroup, then becomes bwrap with stdin ``/dev/null``."""
    program = native_program()
    if program is None:
        raise OSError(errno.ENOEXEC, "no seccomp filter for this machine's architecture")
    argv = await asyncio.to_thread(launch_argv, session, policy, command, timeout_s, started_fd)
    fd = await asyncio.to_thread(program_descriptor, program)
    try:
        group = await asyncio.to_thread(
            CommandCgroup.create, f"{os.getpid()}-{secrets.token_hex(6)}", session.settings
        )
        argv = [str(fd) if arg == SECCOMP_FD_ARG else arg for arg in argv]
        if group is not None:
            argv = ["/bin/sh", "-c", 'read -r _ && exec "$@" </dev/null', "sh", *argv]
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL if group is None else asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=session.working_directory,
                env=sandbox_environment(session),
                start_new_session=True,
                pass_fds=(fd, started_fd),
            )
        except BaseException:
            if group is not None:
                await asyncio.shield(asyncio.to_thread(group.remove))
            raise
    finally:
        os.close(fd)
    launched = Launched(proc, group)
    if group is not None:
        try:
            await _enter(launched, group)
        except BaseException:  # cancelled while the shell waits: it never becomes bwrap
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await asyncio.shield(launched.release())
            raise
    return launched


async def _enter(launched: Launched, group: CommandCgroup) -> None:
    """Move the waiting shell into the cgroup, then let it go (a failed move leaves the rlimits
    alone to bound the command; a shell that already died shows as its exit)."""
    try:
        await asyncio.to_thread(group.enter, launched.proc.pid)
    except OSError:
        await launched.release()
    gate = launched.proc.stdin
    assert gate is not None
    with contextlib.suppress(ConnectionError):
        gate.write(b"go\n")
        await gate.drain()
    gate.close()
