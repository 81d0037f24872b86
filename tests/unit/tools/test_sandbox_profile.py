"""The pure parts of the issue 22 sandbox: the seccomp program (run through a classic-BPF
interpreter for both architectures), the git entries that run later, the limit prelude and the
limit lines, the cgroup discovery, the self-check's isolation report and the profile's order."""

from __future__ import annotations

import errno
import struct
from pathlib import Path

import pytest

from openwork_tools.context import ToolSessionContext
from openwork_tools.modes import SandboxMode, SandboxStatus
from openwork_tools.policy import (
    Access,
    GrantScope,
    NetworkSetting,
    PathGrant,
    SandboxPolicy,
    SandboxSettings,
)
from openwork_tools.sandbox import bwrap, cgroup, gitdir, limits, seccomp
from openwork_tools.sandbox.bwrap import bwrap_argv
from openwork_tools.sandbox.limits import LimitHit
from openwork_tools.sandbox.probe import isolation_problem

ALLOW = seccomp.SECCOMP_RET_ALLOW
EPERM = seccomp.SECCOMP_RET_ERRNO | errno.EPERM
ENOSYS = seccomp.SECCOMP_RET_ERRNO | errno.ENOSYS


def run_bpf(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """A classic-BPF interpreter for the instructions the filter uses, over ``seccomp_data``."""
    padded = (*args, *([0] * (6 - len(args))))
    data = struct.pack("<iIQ6Q", nr, arch, 0, *padded)
    insns = [struct.unpack_from("<HBBI", program, i) for i in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("<I", data, k)[0]
        elif code == 0x06:  # ret k
            return k
        else:
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += jt if taken else jf
        pc += 1


@pytest.mark.parametrize("machine", sorted(seccomp.TABLES))
def test_the_seccomp_filter_refuses_the_listed_calls_and_allows_the_rest(machine: str) -> None:
    """Issue 22 point 1: mount, ptrace, module loading, bpf, io_uring… answer EPERM on both
    architectures; ordinary calls (read, clone for a thread or a process) are allowed."""
    table = seccomp.TABLES[machine]
    program = seccomp.build_program(table)
    arch = table.audit_arch
    denied = seccomp.DENIED_X86_64 if machine == "x86_64" else seccomp.DENIED_AARCH64
    for name, nr in denied.items():
        assert run_bpf(program, nr, arch) == EPERM, name
    assert run_bpf(program, 0 if machine == "x86_64" else 63, arch) == ALLOW  # read
    assert run_bpf(program, table.clone, arch, (0x3D0F00,)) == ALLOW  # a pthread's flags
    assert run_bpf(program, table.clone, arch, (17,)) == ALLOW  # fork: SIGCHLD
    assert run_bpf(program, table.clone3, arch) == ENOSYS


@pytest.mark.parametrize("machine", sorted(seccomp.TABLES))
def test_namespaces_terminal_injection_vsock_and_foreign_abis_are_refused(machine: str) -> None:
    """Issue 22 point 1: clone with CLONE_NEWUSER (or any CLONE_NEW*), TIOCSTI, AF_VSOCK and a
    syscall of another ABI (i386 or x32 numbers would walk around the table) answer EPERM."""
    table = seccomp.TABLES[machine]
    program = seccomp.build_program(table)
    arch = table.audit_arch
    assert run_bpf(program, table.clone, arch, (0x10000000 | 17,)) == EPERM
    assert run_bpf(program, table.clone, arch, (0x40000000,)) == EPERM
    assert run_bpf(program, table.ioctl, arch, (0, seccomp.TIOCSTI)) == EPERM
    assert run_bpf(program, table.ioctl, arch, (0, 0x5401)) == ALLOW  # TCGETS
    assert run_bpf(program, table.socket, arch, (seccomp.AF_VSOCK,)) == EPERM
    assert run_bpf(program, table.socket, arch, (1,)) == ALLOW  # AF_UNIX
    assert run_bpf(program, 0, 0x40000003) == EPERM  # AUDIT_ARCH_I386
    if table.x32_bit:
        assert run_bpf(program, 0x40000000, arch) == EPERM


def test_both_tables_refuse_the_same_calls() -> None:
    """One list in two numberings: only x86_64's iopl/ioperm have no aarch64 counterpart."""
    assert set(seccomp.DENIED_X86_64) - set(seccomp.DENIED_AARCH64) == {"iopl", "ioperm"}
    assert set(seccomp.DENIED_AARCH64) <= set(seccomp.DENIED_X86_64)


def test_the_git_entries_that_run_later_include_submodules_and_stop_at_pointers(
    tmp_path: Path,
) -> None:
    """Issue 22 point 3: config, hooks, info… of ``.git`` and of each submodule's git dir are
    listed for the read-only binds; objects, refs and the index are not; a ``.git`` file (a
    worktree or submodule checkout) is itself the entry."""
    ws = tmp_path / "ws"
    git = ws / ".git"
    for name in ("objects", "refs", "hooks", "info", "modules/lib/a/hooks", "modules/lib/a/refs"):
        (git / name).mkdir(parents=True)
    for name in ("config", "HEAD", "index", "modules/lib/a/HEAD", "modules/lib/a/config"):
        (git / name).write_text("x")
    entries = gitdir.read_only_git_entries(ws)
    assert sorted(str(e.relative_to(git)) for e in entries) == [
        "config",
        "hooks",
        "info",
        "modules/lib/a/config",
        "modules/lib/a/hooks",
    ]
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".git").write_text(f"gitdir: {git}\n")
    assert gitdir.read_only_git_entries(linked) == [linked / ".git"]
    assert gitdir.linked_git_dirs(linked) == (git.resolve(),)


def test_a_worktrees_gitdir_and_its_common_dir_are_found(tmp_path: Path) -> None:
    """Issue 22 point 3: a linked worktree's ``.git`` names ``main/.git/worktrees/x``, whose
    ``commondir`` names ``main/.git``: both are hard-protected for the file tools."""
    common = tmp_path / "main" / ".git"
    own = common / "worktrees" / "x"
    own.mkdir(parents=True)
    (own / "commondir").write_text("../..\n")
    ws = tmp_path / "x"
    ws.mkdir()
    (ws / ".git").write_text("gitdir: ../main/.git/worktrees/x\n")
    assert gitdir.linked_git_dirs(ws) == (own.resolve(), common.resolve())


def test_the_prelude_says_it_started_sets_hard_limits_then_runs_the_command() -> None:
    """Issue 22 point 5: data, processes, file size and CPU time, soft and hard at once; before
    them one byte on the started descriptor, which the command never inherits, and no command
    at all when that byte cannot be written (``sandbox.launch``)."""
    settings = SandboxSettings(memory_mb=1024, max_processes=64, max_file_mb=8)
    text = limits.prelude(settings, 29.5, 7)
    assert text == (
        "{ printf 1 >&7; } 2>/dev/null || exit 97; exec 7>&-; "
        "ulimit -S -H -d 1048576 2>/dev/null; ulimit -S -H -u 64 2>/dev/null; "
        "ulimit -S -H -f 8192 2>/dev/null; ulimit -S -H -t 30 2>/dev/null; "
        'exec /bin/bash -c "$1"'
    )


def test_a_limit_line_needs_a_failed_run_or_a_measured_counter() -> None:
    """Issue 22 point 5: the output markers count only for a failed run; the cgroup's counters
    and a SIGXFSZ exit are certain."""
    hit = limits.limits_hit
    assert hit("memoryerror", 1, failed=True, measured=frozenset()) == [LimitHit.MEMORY]
    assert hit("memoryerror", 0, failed=False, measured=frozenset()) == []
    assert hit("", 153, failed=True, measured=frozenset()) == [LimitHit.FILE_SIZE]
    measured = frozenset({LimitHit.PROCESSES})
    assert hit("", 0, failed=False, measured=measured) == [LimitHit.PROCESSES]
    settings = SandboxSettings(memory_mb=1024, max_processes=64, max_file_mb=8)
    assert limits.limit_text(LimitHit.PROCESSES, settings) == (
        "[sandbox: the command exceeded the process limit of 64]"
    )


def test_cgroup_parents_are_found_for_v1_and_only_a_delegated_v2(tmp_path: Path) -> None:
    """Issue 22 point 5: v1 needs writable pids and memory hierarchies; v2 needs both
    controllers enabled for the daemon's children."""
    (tmp_path / "pids" / "a").mkdir(parents=True)
    (tmp_path / "memory" / "b").mkdir(parents=True)
    v1 = cgroup._own_cgroups("8:pids:/a\n4:memory:/b\n0::/\n")
    assert cgroup.parents_from({k: v for k, v in v1.items() if k}, tmp_path) == (
        cgroup.CgroupParents(1, tmp_path / "pids" / "a", tmp_path / "memory" / "b")
    )
    v2_root = tmp_path / "v2"
    (v2_root / "svc").mkdir(parents=True)
    (v2_root / "cgroup.controllers").write_text("cpu memory pids\n")
    (v2_root / "svc" / "cgroup.subtree_control").write_text("cpu\n")
    assert cgroup.parents_from({"": "/svc"}, v2_root) is None
    (v2_root / "svc" / "cgroup.subtree_control").write_text("memory pids\n")
    assert cgroup.parents_from({"": "/svc"}, v2_root) == (
        cgroup.CgroupParents(2, v2_root / "svc", v2_root / "svc")
    )


REPORT = (
    "CapEff:\t0000000000000000\nCapPrm:\t0000000000000000\nCapBnd:\t0000000000000000\n"
    "Seccomp:\t2\nnet-devices\nInter-|   Receive\n face |bytes\n    lo: 0 0\n"
)


def test_the_self_check_requires_zero_capabilities_seccomp_and_loopback_only() -> None:
    """Issue 22: the self-check is meaningful: any kept capability, a missing filter or a host
    interface makes the sandbox unavailable."""
    assert isolation_problem(REPORT) is None
    kept = REPORT.replace("CapBnd:\t0000000000000000", "CapBnd:\t000001fffeffffff")
    assert isolation_problem(kept) == "the sandbox kept capabilities (CapBnd 000001fffeffffff)"
    assert isolation_problem(REPORT.replace("Seccomp:\t2", "Seccomp:\t0")) == (
        "the seccomp filter is not active"
    )
    assert isolation_problem(REPORT + "  eth0: 1 2\n") == "the sandbox shares the host's network"


def _session(tmp_path: Path, **kwargs: object) -> ToolSessionContext:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    (home / ".npmrc").write_text("x")
    ws = home / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
    (ws / ".git" / "config").write_text("x")
    (tmp_path / "ow" / "spill" / "s1").mkdir(parents=True, exist_ok=True)
    return ToolSessionContext(
        working_directory=ws,
        sandbox=SandboxStatus(True),
        home=home,
        spill_dir=tmp_path / "ow" / "spill" / "s1",
        secret_dirs=(tmp_path / "ow",),
        protected_roots=(tmp_path / "ow",),
        environment={"PATH": "/usr/bin:/bin"},
        runtime_dirs=(),
        **kwargs,  # type: ignore[arg-type]
    )


def _last(argv: list[str], flag: str, path: Path) -> int:
    """The position of the last ``flag path`` pair (later mounts cover earlier ones)."""
    return max(i for i in range(len(argv) - 1) if argv[i] == flag and argv[i + 1] == str(path))


def test_the_profile_masks_after_it_binds_and_shows_the_sessions_own_dirs_last(
    tmp_path: Path,
) -> None:
    """Issue 22: the workspace, the credential masks, (the grants,) the git entries read-only,
    the daemon's home masked, then this session's spill (read-only) and temp dir (writable)."""
    session = _session(tmp_path)
    session.prepare_temp_dir()
    argv = bwrap_argv(session, SandboxPolicy(SandboxMode.AUTO), ["true"])
    ws = session.working_directory
    order = [
        _last(argv, "--bind", ws),
        _last(argv, "--tmpfs", session.home / ".ssh"),
        _last(argv, "--ro-bind", ws / ".git" / "config"),
        _last(argv, "--tmpfs", tmp_path.resolve() / "ow"),
        _last(argv, "--ro-bind", session.spill_dir),  # type: ignore[arg-type]
        _last(argv, "--bind", session.temp_dir),  # type: ignore[arg-type]
    ]
    assert order == sorted(order)
    npmrc = argv.index(str(session.home / ".npmrc"))
    assert argv[npmrc - 2 : npmrc] == ["--ro-bind", "/dev/null"]
    assert argv[argv.index("/tmp") - 2 : argv.index("/tmp")] == ["--bind", str(session.temp_dir)]
    assert "--unshare-net" in argv and "--cap-drop" in argv and "--disable-userns" in argv


def test_the_network_is_shared_only_by_the_setting_or_the_calls_grant(tmp_path: Path) -> None:
    """Issue 22 point 2: ``--unshare-net`` unless ``OPENWORK_SANDBOX_NETWORK=on`` or this call's
    policy carries the approved network grant."""
    off = _session(tmp_path)
    on = _session(tmp_path, settings=SandboxSettings(network=NetworkSetting.ON))
    policy = SandboxPolicy(SandboxMode.AUTO)
    assert "--unshare-net" in bwrap_argv(off, policy, ["true"])
    assert "--unshare-net" not in bwrap_argv(on, policy, ["true"])
    granted = SandboxPolicy(SandboxMode.AUTO, network=True)
    assert "--unshare-net" not in bwrap_argv(off, granted, ["true"])


def test_a_write_grant_over_the_workspace_still_leaves_git_read_only(tmp_path: Path) -> None:
    """Issue 22 point 3: in accept-edits a card may open the workspace for one call; what runs
    later in ``.git`` is still bound read-only after that grant."""
    session = _session(tmp_path)
    ws = session.working_directory
    grant = PathGrant(ws, Access.WRITE, GrantScope.SUBTREE)
    argv = bwrap_argv(session, SandboxPolicy(SandboxMode.ACCEPT_EDITS, (grant,)), ["true"])
    assert _last(argv, "--ro-bind", ws / ".git" / "config") > _last(argv, "--bind", ws)
    assert _last(argv, "--ro-bind", ws / ".git" / "hooks") > _last(argv, "--bind", ws)
    plain = bwrap_argv(session, SandboxPolicy(SandboxMode.ACCEPT_EDITS), ["true"])
    assert str(ws / ".git" / "config") not in plain


def test_the_host_sockets_are_read_from_the_kernels_listing_by_path_only() -> None:
    """Issue 22 point 2: every pathname socket of /proc/net/unix, once each; abstract names
    (``@…``, their own namespace per network namespace) and unbound sockets have no path."""
    listing = (
        "Num       RefCount Protocol Flags    Type St Inode Path\n"
        "0000000037807f24: 00000002 00000000 00010000 0001 01  4830 /var/run/postgresql/.s.PGSQL.5432\n"
        "00000000f373dbdf: 00000003 00000000 00000000 0001 03 764004\n"
        "00000000a1: 00000002 00000000 00010000 0001 01  4831 @/tmp/.X11-unix/X0\n"
        "00000000a2: 00000002 00000000 00010000 0001 01  4832 /home/me/my agent/ctl.sock\n"
        "00000000a3: 00000003 00000000 00000000 0001 03  4833 /home/me/my agent/ctl.sock\n"
    )
    assert bwrap.parse_unix_sockets(listing) == [
        Path("/var/run/postgresql/.s.PGSQL.5432"),
        Path("/home/me/my agent/ctl.sock"),
    ]
