"""Starting one sandboxed bash command: its command line, its seccomp descriptor and, when the
daemon can make one, its cgroup (issue 22; tools.md §5, §7 bash)."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import secrets
from asyncio.subprocess import Process
from dataclasses import dataclass

from openwork_tools.context import ToolSessionContext
from openwork_tools.policy import SandboxPolicy
from openwork_tools.sandbox.bwrap import SECCOMP_FD_ARG, bwrap_argv, sandbox_environment
from openwork_tools.sandbox.cgroup import CommandCgroup
from openwork_tools.sandbox.limits import LimitHit, prelude
from openwork_tools.sandbox.seccomp import native_program, program_descriptor


def launch_argv(
    session: ToolSessionContext, policy: SandboxPolicy, command: str, timeout_s: float
) -> list[str]:
    """Blocking: the session's temp dir made, then the sandboxed command line. A bwrap that is
    not there is an ``OSError`` here, as a failed spawn (the cgroup's shell would only see it
    after it started)."""
    if not os.access(session.bwrap_path, os.X_OK):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), session.bwrap_path)
    session.prepare_temp_dir()
    script = ["/bin/bash", "-c", prelude(session.settings, timeout_s), "/bin/bash", command]
    return bwrap_argv(session, policy, script)


@dataclass(slots=True)
class Launched:
    """A started command tree and its cgroup, if the daemon could make one."""

    proc: Process
    cgroup: CommandCgroup | None

    async def release(self) -> frozenset[LimitHit]:
        """The limits its cgroup enforced; then the cgroup is emptied and removed."""
        group = self.cgroup
        if group is None:
            return frozenset()
        self.cgroup = None
        hits = await asyncio.to_thread(group.hits)
        await asyncio.to_thread(group.remove)
        return hits


async def spawn(
    session: ToolSessionContext, policy: SandboxPolicy, command: str, timeout_s: float
) -> Launched:
    """Start bwrap with the seccomp filter on a descriptor only the child inherits. With a
    cgroup, a shell first waits on its stdin until its pid is in the cgroup, then becomes bwrap
    with stdin ``/dev/null``."""
    program = native_program()
    if program is None:
        raise OSError(errno.ENOEXEC, "no seccomp filter for this machine's architecture")
    argv = await asyncio.to_thread(launch_argv, session, policy, command, timeout_s)
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
                pass_fds=(fd,),
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
