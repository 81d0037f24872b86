"""Drive `openwork serve` as a subprocess over HTTP (no sleeps: wait on its log and on SSE)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import orjson

from tests.support.contract import check_event, contract_client

TOKEN = "e2e-token"


@dataclass
class Daemon:
    process: asyncio.subprocess.Process
    url: str
    home: Path
    log_lines: list[str] = field(default_factory=list)
    _reader: asyncio.Task[None] | None = None
    _line_added: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def logged(self, event: str, timeout: float = 30) -> dict[str, object]:
        """The first JSON log event named ``event``, awaited as its line arrives (bounded)."""

        def found() -> dict[str, object] | None:
            for line in self.log_lines:
                with contextlib.suppress(ValueError):
                    parsed = json.loads(line)
                    if isinstance(parsed, dict) and parsed.get("event") == event:
                        return parsed
            return None

        async with asyncio.timeout(timeout), self._line_added:
            await self._line_added.wait_for(lambda: found() is not None)
            match = found()
            assert match is not None
            return match

    async def logged_times(
        self, event: str, count: int, timeout: float = 60, **fields: object
    ) -> list[dict[str, object]]:
        """The first ``count`` JSON log events named ``event`` with these ``fields``, awaited."""

        def found() -> list[dict[str, object]]:
            events = []
            for line in self.log_lines:
                with contextlib.suppress(ValueError):
                    parsed = json.loads(line)
                    if (
                        isinstance(parsed, dict)
                        and parsed.get("event") == event
                        and all(parsed.get(k) == v for k, v in fields.items())
                    ):
                        events.append(parsed)
            return events

        async with asyncio.timeout(timeout), self._line_added:
            await self._line_added.wait_for(lambda: len(found()) >= count)
            return found()[:count]

    def client(self) -> httpx.AsyncClient:
        return contract_client(
            base_url=self.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=20
        )

    async def stop(self, sig: signal.Signals = signal.SIGTERM, timeout: float = 30) -> int:
        """Signal the daemon and await its exit. The bound is generous: a stop takes about a
        second alone, and over 15 s when the suite's first minutes load the two cores five times
        over (one kill-matrix preparation ran out of 15 s)."""
        if self.process.returncode is None:
            self.process.send_signal(sig)
        async with asyncio.timeout(timeout):
            code = await self.process.wait()
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._reader, 5)
        return code


async def start_daemon(
    *,
    home: Path,
    database_url: str | None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    command: tuple[str, ...] | None = None,
    cwd: Path | None = None,
) -> Daemon:
    """``database_url=None`` runs the daemon on its embedded PostgreSQL under ``home``;
    ``command`` replaces ``python -m openwork_core.daemon serve`` (an installed console script)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("OPENWORK_")} | {
        "OPENWORK_HOME": str(home),
        "OPENWORK_LISTEN": "127.0.0.1:0",
        "OPENWORK_TOKEN": TOKEN,
        "OPENWORK_LOG_FORMAT": "json",
        "HOME": str(home / "user-home"),
        **({"OPENWORK_DATABASE_URL": database_url} if database_url is not None else {}),
        **(env or {}),
    }
    argv = command or (sys.executable, "-m", "openwork_core.daemon", "serve")
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=full_env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    lines: list[str] = []
    listening: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    line_added = asyncio.Condition()

    async def read() -> None:
        assert process.stderr is not None
        async for raw in process.stderr:
            line = raw.decode(errors="replace").rstrip("\n")
            async with line_added:
                lines.append(line)
                line_added.notify_all()
            with contextlib.suppress(ValueError):
                event = json.loads(line)
                if event.get("event") == "daemon.listening" and not listening.done():
                    listening.set_result(event["url"])
        if not listening.done():
            listening.set_exception(RuntimeError("daemon exited:\n" + "\n".join(lines[-30:])))

    reader = asyncio.get_running_loop().create_task(read())
    try:
        async with asyncio.timeout(timeout):
            url = await listening
    except BaseException:
        process.kill()
        await process.wait()
        raise
    return Daemon(process, url, home, lines, reader, line_added)


async def events_until_turn_finished(
    client: httpx.AsyncClient, session_id: str, ready: asyncio.Event, timeout: float = 30
) -> AsyncIterator[dict[str, object]]:
    """Yield SSE envelopes of the session (``ready`` is set once connected)."""
    async with (
        asyncio.timeout(timeout),
        client.stream("GET", f"/v1/sessions/{session_id}/events") as response,
    ):
        assert response.status_code == 200
        ready.set()
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                envelope = orjson.loads(line[5:].strip())
                check_event(f"/v1/sessions/{session_id}/events", envelope)
                yield envelope


async def run_turn_and_wait(
    client: httpx.AsyncClient,
    session_id: str,
    text: str,
    client_request_id: str,
    timeout: float = 30,
) -> tuple[str, list[dict[str, object]]]:
    """Start a turn and collect its updates until its turn_finished (bounded by ``timeout``)."""
    ready = asyncio.Event()
    queue: asyncio.Queue[dict[str, object]] = asyncio.Queue()

    async def collect() -> None:
        async for envelope in events_until_turn_finished(client, session_id, ready, timeout):
            queue.put_nowait(envelope)

    task = asyncio.get_running_loop().create_task(collect())
    try:
        async with asyncio.timeout(30):  # the first load imports the session runtime
            await ready.wait()
        turn_id = await start_turn(client, session_id, text, client_request_id)
        collected: list[dict[str, object]] = []
        async with asyncio.timeout(timeout):
            while True:
                envelope = await queue.get()
                if envelope["turnId"] != turn_id:
                    continue
                collected.append(envelope)
                update = envelope["update"]
                assert isinstance(update, dict)
                if update["type"] == "turn_finished":
                    return turn_id, collected
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


async def start_turn(
    client: httpx.AsyncClient, session_id: str, text: str, client_request_id: str
) -> str:
    response = await client.post(
        f"/v1/sessions/{session_id}/turns",
        json={"client_request_id": client_request_id, "input": [{"type": "text", "text": text}]},
    )
    assert response.status_code == 202, response.text
    turn_id = response.json()["turn_id"]
    assert isinstance(turn_id, str)
    return turn_id
