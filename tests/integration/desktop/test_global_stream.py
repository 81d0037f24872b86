"""Issue 16 point 5: ``GET /v1/events`` carries ``id:`` and replays by ``Last-Event-ID`` like the
per-session stream (daemon-api.md §2, §4)."""

from __future__ import annotations

from pathlib import Path

import httpx

from openwork_core.daemon.desktop_schemas import SessionUpdateEnvelopeBody
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.storage.postgres.store import PostgresStore
from tests.support.live_app import live_app
from tests.support.runtime import runtime
from tests.support.sse import SseEvent, open_events


async def _start(client: httpx.AsyncClient, sid: str, text: str) -> str:
    response = await client.post(
        f"/v1/sessions/{sid}/turns",
        json={"client_request_id": text, "input": [{"type": "text", "text": text}]},
    )
    assert response.status_code == 202, response.text
    return str(response.json()["turn_id"])


def _finished(turn_id: str) -> object:
    return lambda e: e.turn_id == turn_id and e.type == "turn_finished"


async def test_the_global_stream_numbers_its_events_and_replays_after_last_event_id(
    store: PostgresStore, tmp_path: Path
) -> None:
    """Every event has ``id:`` = the broadcast's own sequence (consecutive across sessions);
    reconnecting with ``Last-Event-ID: N`` replays exactly the events after N, then goes live;
    a cursor ahead of this process answers ``resync`` first."""
    model = ScriptedModel([ScriptedResponse(text=t) for t in ("a", "b", "c")])
    async with (
        runtime(store, tmp_path, model) as rt,
        live_app(rt.core) as app,
        app.client() as client,
    ):
        first, second = await rt.new_session(), await rt.new_session()
        async with open_events(client, "/v1/events") as stream:
            one = await _start(client, first, "one")
            seen = await stream.until(_finished(one))  # type: ignore[arg-type]
            two = await _start(client, second, "two")
            seen += await stream.until(_finished(two))  # type: ignore[arg-type]
        ids = [int(e.id or 0) for e in seen]
        assert ids == list(range(ids[0], ids[0] + len(seen)))
        assert {e.data["sessionId"] for e in seen} == {first, second}
        for event in seen:
            SessionUpdateEnvelopeBody.model_validate(event.data)

        half = len(ids) // 2
        async with open_events(client, "/v1/events", last_event_id=ids[half - 1]) as replay:
            replayed = await replay.take(len(ids) - half)
            assert [int(e.id or 0) for e in replayed] == ids[half:]
            assert [e.data for e in replayed] == [e.data for e in seen[half:]]
            three = await _start(client, first, "three")
            live: list[SseEvent] = await replay.until(_finished(three))  # type: ignore[arg-type]
            assert int(live[0].id or 0) == ids[-1] + 1

        async with open_events(client, "/v1/events", last_event_id=ids[-1] + 10**6) as ahead:
            resync = await ahead.next()
        current = int(live[-1].id or 0)
        assert (resync.event, resync.id) == ("resync", str(current))
        assert resync.data == {"version": 7, "sequence": current, "update": {"type": "resync"}}
