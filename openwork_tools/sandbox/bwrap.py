"""The bubblewrap profile of one bash call, built from the call's policy (DESIGN.md §2,
permissions-sandbox.md §1, tools.md §5).

Whole filesystem read-only; ``/dev``, ``/proc`` fresh; temp dirs writable; the workspace writable
only in ``auto`` and never when it is ``$HOME`` or an ancestor; credential dirs hidden by an empty
tmpfs; approved grants bound for this call; hard-protected paths re-bound read-only last. The
network stays shared: nothing here makes network claims.

New session: the caller starts bwrap with ``start_new_session=True`` (setsid), so the sandbox has
no controlling terminal and its own process group. bwrap's ``--new-session`` is deliberately not
used: it would move the sandbox's pid-1 out of that process group, and a SIGKILL of the group
that lands before bwrap has armed ``--die-with-parent`` would then orphan the sandbox (seen in
tests). Without it every sandboxed process is born in the group that ``terminate`` kills, and
killing the namespace's pid 1 takes down anything that later left the group.
"""

from __future__ import annotations

import os
from pathlib import Path

from openwork_tools.context import ToolSessionContext
from openwork_tools.modes import SandboxMode
from openwork_tools.paths import is_under
from openwork_tools.policy import Access, SandboxPolicy


def workspace_writable(session: ToolSessionContext, policy: SandboxPolicy) -> bool:
    """bash may write the workspace only in auto, and never when it is $HOME or an ancestor."""
    ws, home = session.working_directory, session.home
    return policy.mode is SandboxMode.AUTO and not is_under(home, ws)


def bwrap_argv(session: ToolSessionContext, policy: SandboxPolicy, argv: list[str]) -> list[str]:
    """Blocking (``exists`` checks): the full bwrap command line wrapping ``argv``."""
    ws = session.working_directory
    args = [session.bwrap_path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for temp in session.temp_dirs:
        if temp.is_dir():
            args += ["--bind", str(temp), str(temp)]
    if workspace_writable(session, policy):
        args += ["--bind", str(ws), str(ws)]
    elif any(is_under(ws, t) for t in session.temp_dirs):
        args += ["--ro-bind", str(ws), str(ws)]
    for cred in session.credential_dirs:
        if cred.is_dir():
            args += ["--tmpfs", str(cred)]
    for grant in policy.grants:
        if any(is_under(grant.path, secret) for secret in session.secret_dirs):
            continue  # never grantable
        if os.path.lexists(grant.path):
            flag = "--bind" if grant.access is Access.WRITE else "--ro-bind"
            args += [flag, str(grant.path), str(grant.path)]
    protected = [*session.protected_roots, ws / ".git" / "hooks"]
    for path in protected:
        if path.exists():
            args += ["--ro-bind", str(path), str(path)]
    for secret in session.secret_dirs:  # last: no bind above may show them again
        if secret.is_dir():
            args += ["--tmpfs", str(secret)]
    spill = session.spill_dir
    if spill is not None and spill.is_dir() and session.secret_dirs:
        args += ["--ro-bind", str(spill), str(spill)]  # the model's own output stays readable
    args += ["--die-with-parent", "--unshare-pid", "--chdir", str(ws), "--"]
    return args + argv


def sandbox_environment(session: ToolSessionContext) -> dict[str, str]:
    """The six host variables plus ``GOCACHE`` in a writable temp dir (tools.md §7 bash)."""
    env = dict(session.environment)
    temp = session.temp_dirs[0] if session.temp_dirs else Path("/tmp")
    env.setdefault("TMPDIR", str(temp))
    env["GOCACHE"] = str(temp / "openwork-gocache")
    return env
