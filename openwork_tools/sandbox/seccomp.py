"""The seccomp filter of every bash call, assembled here as a classic-BPF program (bwrap's
``--seccomp FD`` reads the raw ``struct sock_filter`` array from the descriptor).

Pure Python, no native dependency: the program is a few dozen fixed instructions, the syscall
numbers of the two supported architectures are listed below (from the kernel's
``asm/unistd_64.h`` and ``asm-generic/unistd.h``).

What the filter refuses, with ``EPERM`` (the command sees an ordinary error, never a kill):

- every call of a foreign ABI (i386 or x32 on x86_64): their syscall numbers differ, so a
  filter written for the native table could be walked around through them;
- mount and namespace surgery: ``mount``, ``umount2``, ``pivot_root``, ``chroot``, the new mount
  API (``fsopen`` … ``mount_setattr``), ``unshare``, ``setns`` and ``clone`` with any
  ``CLONE_NEW*`` flag (``clone3`` answers ``ENOSYS``, as its flags sit in memory the filter cannot
  read: the C library then falls back to ``clone``);
- reaching other processes or the kernel: ``ptrace``, ``process_vm_readv/writev``, ``kcmp``,
  module loading (``init_module``, ``finit_module``, ``delete_module``), ``kexec_*``, ``bpf``,
  ``perf_event_open``, ``userfaultfd``, the key rings (``keyctl``, ``add_key``, ``request_key``),
  ``open_by_handle_at`` / ``name_to_handle_at`` (a path-less way around bind mounts),
  ``io_uring_*`` (which performs calls this filter would not see), ``swapon/off``, ``reboot``,
  ``syslog``, ``acct``, ``quotactl``, ``iopl`` / ``ioperm``;
- ``ioctl(TIOCSTI)`` / ``ioctl(TIOCLINUX)`` (typing into a terminal), and ``socket(AF_VSOCK)``
  (the hypervisor's sockets are not in any network namespace).

Most of these already fail for lack of capabilities (the sandbox has none); the filter is the
second wall, and the only one for ``io_uring``, vsock and nested user namespaces.
"""

from __future__ import annotations

import errno
import os
import platform
import struct
from collections.abc import Sequence
from dataclasses import dataclass

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little endian)
_NR = 0
_ARCH = 4


def _arg_low(index: int) -> int:
    return 16 + 8 * index


# classic BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
_X32_SYSCALL_BIT = 0x40000000

CLONE_NAMESPACE_FLAGS = 0x7E020000
"""``CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET``."""
TIOCSTI = 0x5412
TIOCLINUX = 0x541C
AF_VSOCK = 40


@dataclass(frozen=True, slots=True)
class SyscallTable:
    """One architecture: its audit id and the numbers the filter needs."""

    audit_arch: int
    denied: tuple[int, ...]
    clone: int
    clone3: int
    ioctl: int
    socket: int
    x32_bit: bool


DENIED_X86_64 = {
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "fsopen": 430,
    "fsconfig": 431, "fsmount": 432, "fspick": 433, "move_mount": 429, "open_tree": 428,
    "mount_setattr": 442, "unshare": 272, "setns": 308, "ptrace": 101, "process_vm_readv": 310,
    "process_vm_writev": 311, "kcmp": 312, "init_module": 175, "finit_module": 313,
    "delete_module": 176, "kexec_load": 246, "kexec_file_load": 320, "bpf": 321,
    "perf_event_open": 298, "userfaultfd": 323, "keyctl": 250, "add_key": 248, "request_key": 249,
    "open_by_handle_at": 304, "name_to_handle_at": 303, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "swapon": 167, "swapoff": 168,
    "reboot": 169, "syslog": 103, "acct": 163, "quotactl": 179, "iopl": 172, "ioperm": 173,
}  # fmt: skip
"""The syscalls refused outright, by name (x86_64 adds ``iopl`` / ``ioperm``, which aarch64 has
not)."""
DENIED_AARCH64 = {
    "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "fsopen": 430, "fsconfig": 431,
    "fsmount": 432, "fspick": 433, "move_mount": 429, "open_tree": 428, "mount_setattr": 442,
    "unshare": 97, "setns": 268, "ptrace": 117, "process_vm_readv": 270,
    "process_vm_writev": 271, "kcmp": 272, "init_module": 105, "finit_module": 273,
    "delete_module": 106, "kexec_load": 104, "kexec_file_load": 294, "bpf": 280,
    "perf_event_open": 241, "userfaultfd": 282, "keyctl": 219, "add_key": 217, "request_key": 218,
    "open_by_handle_at": 265, "name_to_handle_at": 264, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "swapon": 224, "swapoff": 225,
    "reboot": 142, "syslog": 116, "acct": 89, "quotactl": 60,
}  # fmt: skip

TABLES = {
    "x86_64": SyscallTable(
        audit_arch=0xC000003E,
        denied=tuple(DENIED_X86_64.values()),
        clone=56,
        clone3=435,
        ioctl=16,
        socket=41,
        x32_bit=True,
    ),
    "aarch64": SyscallTable(
        audit_arch=0xC00000B7,
        denied=tuple(DENIED_AARCH64.values()),
        clone=220,
        clone3=435,
        ioctl=29,
        socket=198,
        x32_bit=False,
    ),
}
"""``platform.machine()`` -> its table; any other machine has no filter (the sandbox is then
reported unavailable)."""


@dataclass(frozen=True, slots=True)
class _Jump:
    """A conditional jump: to ``true`` / ``false`` (labels), ``None`` falls through."""

    code: int
    k: int
    true: str | None = None
    false: str | None = None


@dataclass(frozen=True, slots=True)
class _Op:
    code: int
    k: int


_Instr = _Op | _Jump | str  # a str is a label


def _assemble(listing: Sequence[_Instr]) -> bytes:
    """The instructions as ``struct sock_filter`` bytes; jumps only go forward in classic BPF."""
    labels: dict[str, int] = {}
    position = 0
    for item in listing:
        if isinstance(item, str):
            labels[item] = position
        else:
            position += 1
    out = bytearray()
    position = 0

    def offset(label: str | None) -> int:
        if label is None:
            return 0
        distance = labels[label] - position - 1
        if not 0 <= distance <= 255:
            raise ValueError(f"jump to {label} out of range")
        return distance

    for item in listing:
        if isinstance(item, str):
            continue
        if isinstance(item, _Jump):
            out += struct.pack("<HBBI", item.code, offset(item.true), offset(item.false), item.k)
        else:
            out += struct.pack("<HBBI", item.code, 0, 0, item.k)
        position += 1
    return bytes(out)


def _ret(action: int) -> _Op:
    return _Op(_RET_K, action)


def build_program(table: SyscallTable) -> bytes:
    """The filter for one architecture, as the bytes bwrap reads."""
    allow = _ret(SECCOMP_RET_ALLOW)
    listing: list[_Instr] = [
        _Op(_LD_W_ABS, _ARCH),
        _Jump(_JEQ_K, table.audit_arch, false="deny"),
        _Op(_LD_W_ABS, _NR),
    ]
    if table.x32_bit:
        listing.append(_Jump(_JGE_K, _X32_SYSCALL_BIT, true="deny"))
    listing += [_Jump(_JEQ_K, nr, true="deny") for nr in table.denied]
    listing += [
        _Jump(_JEQ_K, table.clone3, true="enosys"),
        _Jump(_JEQ_K, table.clone, true="clone"),
        _Jump(_JEQ_K, table.ioctl, true="ioctl"),
        _Jump(_JEQ_K, table.socket, true="socket"),
        allow,
        "clone",
        _Op(_LD_W_ABS, _arg_low(0)),
        _Jump(_JSET_K, CLONE_NAMESPACE_FLAGS, true="deny"),
        allow,
        "ioctl",
        _Op(_LD_W_ABS, _arg_low(1)),
        _Jump(_JEQ_K, TIOCSTI, true="deny"),
        _Jump(_JEQ_K, TIOCLINUX, true="deny"),
        allow,
        "socket",
        _Op(_LD_W_ABS, _arg_low(0)),
        _Jump(_JEQ_K, AF_VSOCK, true="deny"),
        allow,
        "enosys",
        _ret(SECCOMP_RET_ERRNO | errno.ENOSYS),
        "deny",
        _ret(SECCOMP_RET_ERRNO | errno.EPERM),
    ]
    return _assemble(listing)


def native_program() -> bytes | None:
    """The filter for this machine, or ``None`` when its architecture has no table."""
    table = TABLES.get(platform.machine())
    return None if table is None else build_program(table)


def program_descriptor(program: bytes) -> int:
    """Blocking: a memfd holding ``program`` at offset 0, for bwrap's ``--seccomp``; the caller
    passes it to the child (``pass_fds``) and closes it."""
    fd = os.memfd_create("openwork-seccomp")
    try:
        view = memoryview(program)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd
