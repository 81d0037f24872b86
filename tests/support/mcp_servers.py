"""Real MCP servers for the tests (issue 27): ``mcp-server-time`` and ``mcp-server-git`` from
PyPI (the test extras install them beside this interpreter), and
``@modelcontextprotocol/server-everything`` from npm (``npm ci`` of tests/fixtures/mcp_everything,
again whenever its lock file changed), run over streamable HTTP on a loopback port."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "tests" / "fixtures" / "mcp_everything"
_STAMP = EVERYTHING / "node_modules" / ".openwork-lock-sha256"
BIN = Path(sys.executable).parent
_INSTALL_LOCK = Path(tempfile.gettempdir()) / (
    "openwork-mcp-everything-" + hashlib.sha256(str(EVERYTHING).encode()).hexdigest()[:12] + ".lock"
)


def python_server(name: str) -> str:
    """The console script of a PyPI server installed with the test extras."""
    path = BIN / name
    assert path.is_file(), f"{name} is not installed: pip install -e '.[test]'"
    return str(path)


def everything_bin() -> str:
    npm = shutil.which("npm")
    assert npm is not None and shutil.which("node"), (
        "node and npm are needed (scripts/install-system-deps.sh installs them)"
    )
    lock = hashlib.sha256((EVERYTHING / "package-lock.json").read_bytes()).hexdigest()
    # one install at a time: xdist's workers share the folder, and two `npm ci` runs in it
    # break each other (ENOTEMPTY, half-written files)
    with _INSTALL_LOCK.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not _STAMP.is_file() or _STAMP.read_text() != lock:
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"],
                cwd=EVERYTHING,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            assert done.returncode == 0, done.stdout + done.stderr
            _STAMP.write_text(lock)
    return str(EVERYTHING / "node_modules" / ".bin" / "mcp-server-everything")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class HttpServer:
    process: asyncio.subprocess.Process
    url: str
    port: int

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)


async def _start_everything(port: int) -> HttpServer:
    process = await asyncio.create_subprocess_exec(
        everything_bin(),
        "streamableHttp",
        env={**os.environ, "PORT": str(port)},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stderr is not None
    seen: list[str] = []
    async with asyncio.timeout(60):
        while True:
            line = (await process.stderr.readline()).decode(errors="replace")
            if not line:
                raise RuntimeError("server-everything exited:\n" + "".join(seen))
            seen.append(line)
            if "listening on port" in line:
                break
    return HttpServer(process, f"http://127.0.0.1:{port}/mcp", port)


@contextlib.asynccontextmanager
async def everything_http(port: int | None = None) -> AsyncIterator[HttpServer]:
    """server-everything over streamable HTTP on a loopback port, ended (its group) on exit."""
    server = await _start_everything(port or _free_port())
    try:
        yield server
    finally:
        server.kill()
        await server.process.wait()


async def restart_everything(server: HttpServer) -> HttpServer:
    """The same server on the same port again, after a kill."""
    server.kill()
    await server.process.wait()
    return await _start_everything(server.port)


def _toml_value(value: object) -> str:
    if isinstance(value, Mapping):
        return (
            "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
        )
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value)


def write_config(path: Path, servers: Mapping[str, Mapping[str, object]]) -> Path:
    """A TOML config file with these ``[mcp_servers.<name>]`` tables."""
    lines: list[str] = []
    for name, settings in servers.items():
        lines.append(f"[mcp_servers.{json.dumps(name)}]")
        lines.extend(f"{key} = {_toml_value(value)}" for key, value in settings.items())
        lines.append("")
    path.write_text("\n".join(lines))
    return path
