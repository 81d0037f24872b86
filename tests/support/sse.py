"""Read the daemon's Server-Sent Events over httpx streaming: one parsed event at a time, every
wait bounded (daemon-api.md §2 `…/events`, §4 envelopes)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from tests.support.contract import check_event


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event: its ``event:`` name (``message`` when absent), ``id:`` and the JSON
    of its ``data:`` lines."""

    event: str
    id: str | None
    data: dict[str, Any]

    @property
    def sequence(self) -> int:
        value = self.data["sequence"]
        assert isinstance(value, int)
        return value

    @property
    def update(self) -> dict[str, Any]:
        value = self.data["update"]
        assert isinstance(value, dict)
        return value

    @property
    def type(self) -> str:
        value = self.update["type"]
        assert isinstance(value, str)
        return value

    @property
    def turn_id(self) -> str | None:
        value = self.data.get("turnId")
        assert value is None or isinstance(value, str)
        return value

    @property
    def is_resync(self) -> bool:
        return self.event == "resync" or self.data.get("update", {}).get("type") == "resync"


class SseReader:
    """Parses the lines of one streaming response into events (comments such as pings skipped)."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._lines = response.aiter_lines()

    async def next(self, timeout: float = 15) -> SseEvent:
        async with asyncio.timeout(timeout):
            return await self._next()

    async def until(
        self, predicate: Callable[[SseEvent], bool], timeout: float = 30
    ) -> list[SseEvent]:
        """Events up to and including the first one that matches ``predicate``."""
        events: list[SseEvent] = []
        async with asyncio.timeout(timeout):
            while True:
                event = await self._next()
                events.append(event)
                if predicate(event):
                    return events

    async def take(self, count: int, timeout: float = 15) -> list[SseEvent]:
        async with asyncio.timeout(timeout):
            return [await self._next() for _ in range(count)]

    async def _next(self) -> SseEvent:
        name: str | None = None
        event_id: str | None = None
        data: list[str] = []
        async for line in self._lines:
            if line == "":
                if data:
                    payload = orjson.loads("\n".join(data))
                    check_event(self.response.request.url.path, payload)
                    return SseEvent(name or "message", event_id, payload)
                name, event_id = None, None
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "id":
                event_id = value
            elif field == "data":
                data.append(value)
        raise EOFError("the event stream ended")

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self._lines.aclose()  # type: ignore[attr-defined]


@contextlib.asynccontextmanager
async def open_events(
    client: httpx.AsyncClient,
    path: str,
    *,
    last_event_id: int | None = None,
    after_sequence: int | None = None,
    timeout: float = 15,
) -> AsyncIterator[SseReader]:
    """Connect to an event stream; once this yields, the daemon's subscription exists (the
    response head is only sent after the route subscribed), so nothing emitted later is missed."""
    headers = {} if last_event_id is None else {"Last-Event-ID": str(last_event_id)}
    params = {} if after_sequence is None else {"after_sequence": after_sequence}
    async with contextlib.AsyncExitStack() as stack:
        async with asyncio.timeout(timeout):
            response = await stack.enter_async_context(
                client.stream("GET", path, headers=headers, params=params)
            )
        assert response.status_code == 200, (await response.aread()).decode()
        assert response.headers["content-type"].startswith("text/event-stream")
        reader = SseReader(response)
        try:
            yield reader
        finally:
            await reader.aclose()
