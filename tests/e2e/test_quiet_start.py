"""A quiet start (issue 24 point 6): ``openwork serve`` on its embedded PostgreSQL, on a
terminal-like readable stderr, in an environment without ``XDG_RUNTIME_DIR`` and with a typo in
an ``OPENWORK_*`` variable: stderr carries the banner and our own lines only — the embedded
database's own records (each command it ran, ``PostmasterInfo(…)``) are in the log file, no
library warns, and the typo is one warning line naming the closest setting."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from tests.support.cli import cli_env


async def test_the_embedded_database_logs_to_the_file_and_a_typo_is_one_warning_line(
    embedded_home: Path,
) -> None:
    env = cli_env(
        embedded_home,
        OPENWORK_LOG_FORMAT="console",
        OPENWORK_LISTEN="127.0.0.1:0",
        OPENWORK_MODLE="qwen3",
    )
    env.pop("XDG_RUNTIME_DIR", None)
    env.pop("OPENWORK_DATABASE_URL", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "openwork_core.cli",
        "serve",
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    lines: list[str] = []
    try:
        async with asyncio.timeout(120):
            async for raw in process.stderr:
                lines.append(raw.decode().rstrip("\n"))
                if "daemon.listening" in lines[-1]:
                    break
    finally:
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            await process.communicate()
    assert process.returncode == 0
    text = "\n".join(lines)
    for noise in ("Running commandline", "PostmasterInfo", "RuntimeDirWarning", "Warning:"):
        assert noise not in text, f"{noise!r} on stderr:\n{text}"
    typos = [line for line in lines if "OPENWORK_MODLE" in line]
    assert typos == ["warning: OPENWORK_MODLE is not a setting (did you mean OPENWORK_MODEL?)"], (
        typos
    )
    logged = (embedded_home / "logs" / "openwork.log").read_text()
    assert "Running commandline" in logged, "the embedded database's records are in the file"
