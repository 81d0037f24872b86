"""The bubblewrap profile of one bash call, built from the call's policy (DESIGN.md §2,
permissions-sandbox.md §1, tools.md §5; issue 22 for what it adds: docs/reliability.md).

No privilege: its own user namespace with every capability dropped (``CapEff``/``CapPrm``/
``CapBnd`` zero whatever uid the daemon has, root included), no nested user namespace, and the
seccomp filter of ``sandbox.seccomp``. Its own pid, ipc, uts (and, when the kernel allows, cgroup)
namespaces: a fresh ``/proc`` shows no process of the host, so neither the daemon's
``/proc/<pid>/root`` nor its ``cwd`` leads back to ``OPENWORK_HOME``. Its own network namespace
(loopback only, which also gives it its own abstract unix socket namespace) unless this call or the
daemon's setting grants the network.

Whole filesystem read-only; ``/dev`` and ``/proc`` fresh; the host's socket and runtime
directories (``/tmp``, ``/var/tmp``, ``/run``, ``$XDG_RUNTIME_DIR``) replaced by empty tmpfs, with
the session's own temp dir as ``/tmp``; the workspace writable only in ``auto`` and never when it is
``$HOME`` or an ancestor, its git entries that run later (``sandbox.gitdir``) re-bound read-only;
the credential paths masked (an empty read-only tmpfs for a directory, ``/dev/null`` for a file);
approved grants bound for this call; hard-protected paths re-bound read-only; the daemon's home
masked last, with this session's spill dir (read-only) and temp dir (writable) shown again.

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
from openwork_tools.sandbox.gitdir import read_only_git_entries

SANDBOX_TMP = Path("/tmp")
RUNTIME_DIRS = ("/tmp", "/var/tmp", "/run", "/var/run", "/var/lock")
"""Where the host keeps unix sockets and per-user runtime state; bash gets empty ones."""
SECCOMP_FD_ARG = "{seccomp_fd}"
"""Placeholder in the argv for the descriptor number the caller passes the filter on."""


def workspace_writable(session: ToolSessionContext, policy: SandboxPolicy) -> bool:
    """bash may write the workspace only in auto, and never when it is $HOME or an ancestor."""
    ws, home = session.working_directory, session.home
    return policy.mode is SandboxMode.AUTO and not is_under(home, ws)


def network_allowed(session: ToolSessionContext, policy: SandboxPolicy) -> bool:
    """The daemon's ``OPENWORK_SANDBOX_NETWORK=on``, or this call's approved network grant."""
    return session.settings.network_on or policy.network


def runtime_dirs(session: ToolSessionContext) -> list[Path]:
    """Blocking: the existing host runtime directories, canonical, without duplicates."""
    candidates = [*map(Path, RUNTIME_DIRS), *session.runtime_dirs]
    real = (Path(os.path.realpath(p)) for p in candidates if os.path.isdir(p))
    return list(dict.fromkeys(real))


class _Profile:
    def __init__(self, bwrap: str) -> None:
        self.args = [bwrap]

    def add(self, *args: str | Path) -> None:
        self.args += [str(a) for a in args]

    def bind(self, source: Path, dest: Path | None = None, *, writable: bool = False) -> None:
        self.add("--bind" if writable else "--ro-bind", source, dest or source)

    def mask(self, path: Path) -> None:
        """An empty view of ``path``: a fresh tmpfs for a directory (private to this call and
        gone with it; writable, so that a grant or this session's own dirs can be shown inside),
        ``/dev/null`` read-only for a file."""
        if path.is_dir():
            self.add("--tmpfs", path)
        elif os.path.lexists(path):
            self.add("--ro-bind", "/dev/null", path)


def isolation_args(*, network: bool) -> list[str]:
    """The namespaces, capabilities and seccomp filter of every sandboxed process (also the
    self-check's): the arguments before the first mount."""
    args = [
        "--unshare-user",
        "--disable-userns",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--seccomp",
        SECCOMP_FD_ARG,
    ]
    return args if network else [*args, "--unshare-net"]


def _runtime(profile: _Profile, session: ToolSessionContext) -> list[Path]:
    """Empty host runtime dirs; ``/tmp`` is the session's own temp dir when it has one."""
    masked = runtime_dirs(session)
    temp = session.temp_dir
    for directory in masked:
        if directory == SANDBOX_TMP and temp is not None and temp.is_dir():
            profile.bind(temp, SANDBOX_TMP, writable=True)
        else:
            profile.add("--tmpfs", directory)
    return masked


def _show_again(
    profile: _Profile, session: ToolSessionContext, masked: list[Path], network: bool
) -> list[Path]:
    """The PATH entries (and, with the network, the resolver file) that live in a masked runtime
    dir, read-only: masking ``/run`` must not take NixOS's ``/run/current-system`` or systemd's
    ``stub-resolv.conf`` away."""
    wanted = [Path(p) for p in session.environment.get("PATH", "").split(":") if p]
    if network:
        wanted.append(Path("/etc/resolv.conf"))
    shown: dict[Path, Path] = {}
    for path in wanted:
        real = Path(os.path.realpath(path))
        if not path.is_absolute() or not os.path.exists(real):
            continue
        for dest in (real, path):
            if any(is_under(dest, d) for d in masked):
                shown.setdefault(dest, real)
    for dest, real in shown.items():
        profile.bind(real, dest)
    return list(shown)


def _workspace(profile: _Profile, session: ToolSessionContext, policy: SandboxPolicy) -> None:
    """Writable in auto; else shown again read-only (it lies in a masked runtime dir)."""
    profile.bind(session.working_directory, writable=workspace_writable(session, policy))


def _protect_git(profile: _Profile, session: ToolSessionContext, policy: SandboxPolicy) -> None:
    """After every writable bind of this call (the workspace in auto, or a write grant that
    covers it): ``.git`` becomes a mount point of its own, so it cannot be renamed away and
    replaced, and its entries that run later are read-only (``sandbox.gitdir``)."""
    dot_git = session.working_directory / ".git"
    granted = any(g.access is Access.WRITE and is_under(dot_git, g.path) for g in policy.grants)
    if not (workspace_writable(session, policy) or granted):
        return
    if dot_git.is_dir() and not dot_git.is_symlink():
        profile.bind(dot_git, writable=True)
    for entry in read_only_git_entries(session.working_directory):
        profile.bind(entry)


def _grants(profile: _Profile, session: ToolSessionContext, policy: SandboxPolicy) -> list[Path]:
    """This call's approved paths, bound; returns them."""
    bound = []
    for grant in policy.grants:
        if any(is_under(grant.path, secret) for secret in session.secret_dirs):
            continue  # never grantable
        if os.path.lexists(grant.path):
            profile.bind(grant.path, writable=grant.access is Access.WRITE)
            bound.append(grant.path)
    return bound


def _own_dirs(profile: _Profile, session: ToolSessionContext) -> None:
    """This session's spill dir (read-only) and temp dirs (writable) at their real paths."""
    spill = session.spill_dir
    if spill is not None and spill.is_dir():
        profile.bind(spill)  # the model's own output stays readable
    for temp in session.temp_dirs:
        if temp.is_dir():
            profile.bind(temp, writable=True)


def bwrap_argv(session: ToolSessionContext, policy: SandboxPolicy, argv: list[str]) -> list[str]:
    """Blocking (``exists`` checks): the full bwrap command line wrapping ``argv``. The caller
    replaces ``SECCOMP_FD_ARG`` with the descriptor holding ``seccomp.native_program()``.

    Later mounts cover earlier ones, so the order is the policy. A path that no mount shows again
    after a masked runtime dir hid it needs no mask of its own (one would create a mount point
    inside the session's ``/tmp``); a path that a bind shows again (the workspace, a grant) is
    masked like any other."""
    network = network_allowed(session, policy)
    profile = _Profile(session.bwrap_path)
    profile.add(*isolation_args(network=network))
    profile.add("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
    masked = _runtime(profile, session)
    shown = _show_again(profile, session, masked, network)
    ws = session.working_directory
    if workspace_writable(session, policy) or _hidden(ws, masked, shown):
        _workspace(profile, session, policy)
        shown.append(ws)
    for path in session.credential_paths:
        if os.path.lexists(path) and not _hidden(path, masked, shown):
            profile.mask(path)
    shown += _grants(profile, session, policy)
    _protect_git(profile, session, policy)
    for path in session.protected_roots:
        if os.path.lexists(path) and not _hidden(path, masked, shown):
            profile.bind(path)
    for secret in session.secret_dirs:  # last: no bind above shows them again
        if os.path.lexists(secret) and not _hidden(secret, masked, shown):
            profile.mask(secret)
    _own_dirs(profile, session)
    profile.add("--chdir", ws, "--")
    return profile.args + argv


def _hidden(path: Path, masked: list[Path], shown: list[Path]) -> bool:
    """Under a masked runtime dir and under nothing bound again since, nor holding it."""
    if not any(is_under(path, d) for d in masked):
        return False
    return not any(is_under(path, s) or is_under(s, path) for s in shown)


def sandbox_environment(session: ToolSessionContext) -> dict[str, str]:
    """The six host variables plus ``GOCACHE`` (tools.md §7 bash); ``TMPDIR`` is ``/tmp``, the
    session's own temp dir (the host's may point into a directory bash does not see)."""
    env = dict(session.environment)
    env["TMPDIR"] = str(SANDBOX_TMP)
    env["GOCACHE"] = str(SANDBOX_TMP / "openwork-gocache")
    return env
