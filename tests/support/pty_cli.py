"""``openwork`` on a pseudo-terminal: the child sees a TTY on stdin/stdout/stderr; the test reads
what it prints and waits for text with a time bound (no sleeps)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pty
import re
import signal
import sys
from pathlib import Path

from tests.support.cli import cli_env

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-B]|\r")


class PtyCli:
    def __init__(self, process: asyncio.subprocess.Process, master: int) -> None:
        self.process = process
        self._master = master
        self._raw = bytearray()
        self._changed = asyncio.Event()
        asyncio.get_running_loop().add_reader(master, self._on_readable)

    @classmethod
    async def start(
        cls, *args: str, home: Path, cwd: Path, env: dict[str, str] | None = None
    ) -> PtyCli:
        master, slave = pty.openpty()
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "openwork_core.cli",
            *args,
            cwd=cwd,
            env=cli_env(home, TERM="xterm", COLUMNS="120", LINES="40", **(env or {})),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
        os.close(slave)
        return cls(process, master)

    def _on_readable(self) -> None:
        try:
            data = os.read(self._master, 65536)
        except OSError:  # EIO: the child closed the terminal
            data = b""
        if not data:
            asyncio.get_running_loop().remove_reader(self._master)
        self._raw.extend(data)
        self._changed.set()

    @property
    def raw(self) -> str:
        return self._raw.decode(errors="replace")

    @property
    def text(self) -> str:
        """Everything printed so far, without terminal control sequences."""
        return _ANSI.sub("", self._raw.decode(errors="replace"))

    async def wait_for(self, needle: str, timeout: float = 30) -> None:
        async with asyncio.timeout(timeout):
            while needle not in self.text:
                self._changed.clear()
                if needle in self.text:
                    return
                await self._changed.wait()

    def type(self, keys: str) -> None:
        os.write(self._master, keys.encode())

    def interrupt(self) -> None:
        """Ctrl-C: SIGINT to the command."""
        self.process.send_signal(signal.SIGINT)

    async def exit_code(self, timeout: float = 30) -> int:
        async with asyncio.timeout(timeout):
            code = await self.process.wait()
        with contextlib.suppress(ValueError, OSError):
            asyncio.get_running_loop().remove_reader(self._master)
        self._drain()
        return code

    def _drain(self) -> None:
        """Read what the exited child left in the terminal."""
        os.set_blocking(self._master, False)
        while True:
            try:
                data = os.read(self._master, 65536)
            except OSError:  # nothing left (EAGAIN) or the terminal is closed (EIO)
                return
            if not data:
                return
            self._raw.extend(data)

    def close(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
        with contextlib.suppress(ValueError, OSError):
            asyncio.get_running_loop().remove_reader(self._master)
        with contextlib.suppress(OSError):
            os.close(self._master)
