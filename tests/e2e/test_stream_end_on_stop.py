"""Issue 25 point 5, the unloaded half: when the daemon stops, every open session stream gets a
last typed ``stream_ended`` update (reason ``unloaded``, the next sequence, ``id:`` as always) and
then ends — a client that sees it knows to connect again rather than wait on a dead socket. A
daemon started afterwards on the same database serves the session again, its sequences above the
stream's last one (issue 25 point 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply
from tests.support.daemon import start_daemon, start_turn
from tests.support.postgres import PgCluster
from tests.support.sse import open_events

ENVELOPE_KEYS = {"version", "sessionId", "turnId", "sequence", "occurredAtMs", "update"}


async def test_stopping_the_daemon_ends_each_session_stream_with_stream_ended_unloaded(
    pg_cluster: PgCluster, tmp_path: Path
) -> None:
    database_url = await pg_cluster.new_database()
    home = tmp_path / "home"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with FakeProvider() as fake:
        daemon = await start_daemon(home=home, database_url=database_url, env=provider_env(fake))
        try:
            async with daemon.client() as client:
                created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
                assert created.status_code == 201, created.text
                sid = created.json()["session_id"]
                fake.push(Reply(text="done"))
                async with open_events(client, f"/v1/sessions/{sid}/events") as events:
                    turn_id = await start_turn(client, sid, "go", "req-1")
                    seen = await events.until(
                        lambda e: e.turn_id == turn_id and e.type == "turn_finished"
                    )
                    assert await daemon.stop() == 0
                    ended = await events.next()
                    assert ended.update == {"type": "stream_ended", "reason": "unloaded"}
                    assert ended.sequence == seen[-1].sequence + 1
                    assert ended.id == str(ended.sequence)
                    assert set(ended.data) == ENVELOPE_KEYS and ended.turn_id is None
                    with pytest.raises(EOFError):
                        await events.next()
        finally:
            await daemon.stop()
        again = await start_daemon(home=home, database_url=database_url, env=provider_env(fake))
        try:
            async with again.client() as client:
                body = (await client.get(f"/v1/sessions/{sid}")).json()
                assert body["snapshot"]["lastUpdateSequence"] >= ended.sequence
        finally:
            assert await again.stop() == 0
