"""Opening a file read from the workspace or the skill roots: a regular file only (tools.md §7;
docs/reliability.md "The sandbox"; also AGENTS.md and ``SKILL.md``). A workspace is untrusted: a FIFO there blocks an ordinary ``open`` until a writer
comes, forever, in the worker thread a tool runs on (the turn and the daemon's own stop then wait
on it), and a symlink to a device reads the device. Opened without blocking, checked on the open
descriptor (no window between a check and the open), then handed over as an ordinary file."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

NOT_REGULAR = "not a regular file (a pipe, a socket or a device)"


class NotRegularFile(OSError):
    """The path names a FIFO, a socket or a device; its ``strerror`` says so."""


def open_regular(path: str | Path, *, follow_symlinks: bool = True) -> BinaryIO:
    """``path`` opened for reading in binary; ``IsADirectoryError`` for a directory,
    ``NotRegularFile`` for anything else that is not a regular file, other ``OSError`` as
    ``open`` raises them — with ``follow_symlinks=False``, ``ELOOP`` for a symlink."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_symlinks else os.O_NOFOLLOW)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(mode):
            raise NotRegularFile(errno.EINVAL, NOT_REGULAR, str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
