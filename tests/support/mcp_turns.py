"""Driving turns that call MCP tools through a real daemon: a watcher of a session's updates
that a test can act on mid-turn (approve a card, cancel, kill a server at the first progress)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from tests.support.daemon import Daemon, events_until_turn_finished, start_turn


class TurnWatcher:
    def __init__(self, client: httpx.AsyncClient, session_id: str) -> None:
        self.client = client
        self.session_id = session_id
        self.updates: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.seen: list[dict[str, Any]] = []
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> TurnWatcher:
        async def collect() -> None:
            async for envelope in events_until_turn_finished(
                self.client, self.session_id, self._ready, timeout=120
            ):
                self.updates.put_nowait(envelope)

        self._task = asyncio.get_running_loop().create_task(collect())
        async with asyncio.timeout(10):
            await self._ready.wait()
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task

    async def start(self, text: str, request_id: str) -> str:
        return await start_turn(self.client, self.session_id, text, request_id)

    async def next(self, kind: str, timeout: float = 60) -> dict[str, Any]:
        """The next update of this kind (the updates before it are kept in ``seen``)."""
        async with asyncio.timeout(timeout):
            while True:
                envelope = await self.updates.get()
                update: dict[str, Any] = envelope["update"]
                self.seen.append(update)
                if update["type"] == kind:
                    return update

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [u for u in self.seen if u["type"] == kind]


async def new_session(client: httpx.AsyncClient, workspace: Path) -> str:
    response = await client.post("/v1/sessions", json={"workspace": str(workspace)})
    assert response.status_code == 201, response.text
    session_id: str = response.json()["session_id"]
    return session_id


async def servers(client: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    response = await client.get("/v1/mcp/servers")
    assert response.status_code == 200, response.text
    return {s["name"]: s for s in response.json()["servers"]}


async def wait_ready(daemon: Daemon, *names: str, times: int = 1) -> None:
    """Until each server has become ready ``times`` times (``mcp.server_ready`` log events)."""
    for name in names:
        await daemon.logged_times("mcp.server_ready", times, timeout=90, server=name)


async def file_containing(path: Path, text: str, timeout: float = 30) -> str:
    """The file's text once it contains ``text`` (a file another process writes: polled, bounded)."""
    async with asyncio.timeout(timeout):
        while True:
            content = await asyncio.to_thread(_text_of, path)
            if text in content:
                return content
            await asyncio.sleep(0.05)


def _text_of(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


@contextlib.asynccontextmanager
async def watching(client: httpx.AsyncClient, session_id: str) -> AsyncIterator[TurnWatcher]:
    async with TurnWatcher(client, session_id) as watcher:
        yield watcher
