"""A database outage seen from outside (faults issue, point 1): while PostgreSQL is unreachable,
health answers 503 and every route answers in the error envelope with ``service_unavailable``,
never a bare 500; a turn caught by a stopped and restarted server ends ``failed`` /
``persistence_error``, that end reaches the database once it is back, and the next turn works
without a restart of the daemon."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import httpx

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Gate, Held, Reply
from tests.support.daemon import start_daemon, start_turn
from tests.support.faults import Outage
from tests.support.postgres import PgCluster
from tests.support.sse import open_events


async def _envelope(response: httpx.Response) -> str:
    body = response.json()
    assert set(body) == {"error"}, body
    return str(body["error"]["code"])


async def test_while_the_database_is_unreachable_every_route_answers_503_in_the_envelope(
    tmp_path: Path, database_url: str, pg_cluster: PgCluster, fake_provider: FakeProvider
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=database_url, env=provider_env(fake_provider)
    )
    outage = Outage(pg_cluster.admin_url, database_url)
    try:
        async with daemon.client() as client:
            sid = (await client.post("/v1/sessions", json={"workspace": str(workspace)})).json()[
                "session_id"
            ]
            await outage.begin()
            try:
                health = await client.get("/v1/health")
                assert health.status_code == 503
                probes = [
                    await client.get("/v1/sessions"),
                    await client.post("/v1/sessions", json={"workspace": str(workspace)}),
                    await client.get(f"/v1/sessions/{sid}"),
                    await client.get(f"/v1/sessions/{sid}/messages"),
                    await client.get("/v1/providers"),
                    await client.post(
                        f"/v1/sessions/{sid}/turns",
                        json={"client_request_id": "r", "input": [{"type": "text", "text": "x"}]},
                    ),
                ]
                for response in probes:
                    assert response.status_code == 503, (response.request.url, response.text)
                    assert await _envelope(response) == "service_unavailable"
            finally:
                await outage.end()
            assert (await client.get("/v1/health")).status_code == 200
            assert (await client.get(f"/v1/sessions/{sid}")).status_code == 200
    finally:
        assert await daemon.stop() == 0


async def test_a_stopped_and_restarted_server_fails_the_turn_and_the_next_turn_works(
    tmp_path: Path, pgserver_folder: Path, fake_provider: FakeProvider
) -> None:
    from pgserver import get_server  # type: ignore[attr-defined]
    from pgserver._commands import pg_ctl  # type: ignore[attr-defined]

    data = pgserver_folder / "pg"
    data.mkdir()
    server = get_server(data, cleanup_mode="stop")
    url = server.get_uri()
    user = "pgserver" if os.geteuid() == 0 else None
    workspace = tmp_path / "ws"
    workspace.mkdir()
    gate = Gate()
    fake_provider.push(Held(Reply(text="lost with the server"), gate), Reply(text="works again"))
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=url, env=provider_env(fake_provider)
    )
    try:
        async with daemon.client() as client:
            sid = (await client.post("/v1/sessions", json={"workspace": str(workspace)})).json()[
                "session_id"
            ]
            async with open_events(client, f"/v1/sessions/{sid}/events") as events:
                first = await start_turn(client, sid, "first", "req-1")
                await fake_provider.wait_for_requests(1, timeout=20)
                options = f'-h "" -k {server.get_postmaster_info().socket_dir}'
                await asyncio.to_thread(
                    pg_ctl, ["-w", "-m", "fast", "stop"], pgdata=data, user=user
                )
                gate.release()
                ended = await events.until(
                    lambda e: e.turn_id == first and e.type == "turn_finished", timeout=30
                )
                outcome = ended[-1].update["outcome"]
                assert (outcome["status"], outcome["code"]) == ("failed", "persistence_error")
                snapshot = await client.get(f"/v1/sessions/{sid}")
                assert snapshot.status_code in (200, 503)
                await asyncio.to_thread(
                    pg_ctl,
                    ["-w", "-o", options, "-l", str(data / "log"), "start"],
                    pgdata=data,
                    user=user,
                )
            second = await client.post(
                f"/v1/sessions/{sid}/turns",
                json={"client_request_id": "req-2", "input": [{"type": "text", "text": "again"}]},
            )
            assert second.status_code == 202, second.text
            async with open_events(client, f"/v1/sessions/{sid}/events") as events:
                view = (
                    await client.get(f"/v1/sessions/{sid}/turns/{second.json()['turn_id']}")
                ).json()
                if view["status"] == "running":
                    await events.until(lambda e: e.type == "turn_finished", timeout=30)
            view = (await client.get(f"/v1/sessions/{sid}/turns/{second.json()['turn_id']}")).json()
            assert (view["status"], view["final_text"]) == ("completed", "works again")
            old = (await client.get(f"/v1/sessions/{sid}/turns/{first}")).json()
            assert (old["status"], old["error_code"]) == ("failed", "persistence_error")
    finally:
        gate.release()
        await daemon.stop()
        await asyncio.to_thread(server.cleanup)
