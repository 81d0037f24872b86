"""Run ``openwork`` commands as subprocesses (every wait bounded; no sleeps)."""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class CliRun:
    code: int
    stdout: str
    stderr: str


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a CLI run: this home, no OPENWORK_* of the outer process, no TTY
    colours, and no user config file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENWORK_")}
    env.pop("NO_COLOR", None)
    return env | {
        "OPENWORK_HOME": str(home),
        "HOME": str(home / "user-home"),
        "XDG_CONFIG_HOME": str(home / "user-config"),
        **extra,
    }


async def run_cli(
    *args: str,
    home: Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: bytes | None = None,
    timeout: float = 60,
) -> CliRun:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "openwork_core.cli",
        *args,
        cwd=cwd,
        env=cli_env(home, **(env or {})),
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(timeout):
            out, err = await process.communicate(stdin)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode is not None
    return CliRun(process.returncode, out.decode(), err.decode())
