"""Headless Chromium (the Debian package) driven over the Chrome DevTools Protocol: one page,
its network requests recorded, every wait bounded by a timeout."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import re
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import websockets


class CdpError(RuntimeError):
    pass


@dataclass
class Page:
    """A CDP session on one page target."""

    socket: websockets.ClientConnection
    requests: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _pending: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    _events: dict[str, list[asyncio.Future[dict[str, Any]]]] = field(default_factory=dict)
    _reader: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        async for raw in self.socket:
            message = orjson.loads(raw)
            if "id" in message:
                future = self._pending.pop(message["id"], None)
                if future is not None and not future.done():
                    if "error" in message:
                        future.set_exception(CdpError(str(message["error"])))
                    else:
                        future.set_result(message.get("result", {}))
                continue
            method, params = message.get("method"), message.get("params", {})
            if method == "Network.requestWillBeSent":
                self.requests.append(params["request"]["url"])
            elif method == "Runtime.consoleAPICalled":
                self.console.append(" ".join(str(a.get("value")) for a in params.get("args", [])))
            for waiter in self._events.pop(method, []):
                if not waiter.done():
                    waiter.set_result(params)

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        command_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[command_id] = future
        message = {"id": command_id, "method": method, "params": params or {}}
        await self.socket.send(orjson.dumps(message).decode())  # CDP reads text frames
        async with asyncio.timeout(30):
            return await future

    def next_event(self, method: str) -> asyncio.Future[dict[str, Any]]:
        """Register before causing the event, then await the returned future (bounded)."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._events.setdefault(method, []).append(future)
        return future

    async def evaluate(self, expression: str, timeout: float = 30) -> Any:
        """The JSON value of ``expression`` (a promise is awaited)."""
        async with asyncio.timeout(timeout):
            result = await self.send(
                "Runtime.evaluate",
                {"expression": expression, "awaitPromise": True, "returnByValue": True},
            )
        if "exceptionDetails" in result:
            raise CdpError(str(result["exceptionDetails"]))
        return result["result"].get("value")

    async def screenshot(self, path: Path) -> bytes:
        shot = await self.send("Page.captureScreenshot", {"format": "png"})
        data = base64.b64decode(shot["data"])
        await asyncio.to_thread(_write, path, data)
        return data

    async def close(self) -> None:
        await self.socket.close()
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await self._reader


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def chromium_binary() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "chromium is needed (scripts/install-system-deps.sh installs the Debian package)"
    return found


@contextlib.asynccontextmanager
async def headless_page(profile: Path, width: int = 1280, height: int = 900) -> AsyncIterator[Page]:
    process = await asyncio.create_subprocess_exec(
        chromium_binary(),
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--metrics-recording-only",
        f"--window-size={width},{height}",
        f"--user-data-dir={profile}",
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        "about:blank",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    drain: asyncio.Task[None] | None = None
    try:
        port = await _devtools_port(process.stderr)
        drain = asyncio.get_running_loop().create_task(_drain(process.stderr))
        async with httpx.AsyncClient(timeout=20) as http:
            targets = (await http.get(f"http://127.0.0.1:{port}/json/list")).json()
        target = next(t for t in targets if t["type"] == "page")
        async with websockets.connect(target["webSocketDebuggerUrl"], max_size=None) as socket:
            page = Page(socket)
            page.start()
            await page.send("Network.enable")
            await page.send("Page.enable")
            await page.send("Runtime.enable")
            yield page
            await page.close()
    finally:
        if process.returncode is None:
            process.terminate()
        async with asyncio.timeout(20):
            await process.wait()
            if drain is not None:
                await drain


async def _devtools_port(stderr: asyncio.StreamReader) -> int:
    """Chromium prints ``DevTools listening on ws://127.0.0.1:PORT/…`` once it accepts CDP."""
    seen: list[str] = []
    async with asyncio.timeout(60):
        while True:
            line = (await stderr.readline()).decode(errors="replace")
            if not line:
                raise RuntimeError("chromium exited:\n" + "".join(seen[-20:]))
            seen.append(line)
            match = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if match:
                return int(match.group(1))


async def _drain(stderr: asyncio.StreamReader) -> None:
    while await stderr.readline():
        pass
