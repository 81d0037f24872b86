"""Keys at runtime (issue 14 point 7) through ``openwork serve``: ``PUT /v1/providers/{id}``
with a write-only ``api_key`` keeps it in ``OPENWORK_HOME/run/provider-keys.json`` (0600), never
in PostgreSQL, never in a response or the log, hidden from every tool like the token; ``GET``
shows ``has_key``; a rotation is used by the next model call without a restart; ``null``
deletes it; a restart keeps it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import asyncpg
import httpx
import orjson

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply, ToolCallSpec
from tests.support.daemon import Daemon, run_turn_and_wait, start_daemon


def _key(label: str) -> str:
    return f"sk-{label}-{os.urandom(12).hex()}"


async def _provider(client: httpx.AsyncClient, provider_id: str) -> dict[str, object]:
    listed = (await client.get("/v1/providers")).json()["providers"]
    (found,) = [p for p in listed if p["id"] == provider_id]
    assert isinstance(found, dict)
    return found


async def _turn_key_headers(
    client: httpx.AsyncClient, fake: FakeProvider, sid: str, request: str
) -> str:
    before = len(fake.requests)
    fake.push(Reply(text="ok"))
    turn_id, _ = await run_turn_and_wait(client, sid, "hello", request)
    turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
    assert turn["status"] == "completed", turn
    (sent,) = fake.requests[before:]
    return sent.headers["authorization"]


async def _stored_anywhere(database_url: str, secret: str) -> bool:
    conn = await asyncpg.connect(database_url)
    try:
        tables = await conn.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
        )
        for table in tables:
            rows = await conn.fetch(f'SELECT t::text AS row FROM "{table["tablename"]}" t')
            if any(secret in r["row"] for r in rows):
                return True
        return False
    finally:
        await conn.close()


async def test_a_runtime_key_is_write_only_rotates_without_restart_and_is_deleted_by_null(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    home = tmp_path / "home"
    keys_file = home / "run" / "provider-keys.json"
    first, second = _key("first"), _key("second")
    body: dict[str, object] = {
        "kind": "openai-chat",
        "base_url": fake_provider.url,
        "models": [{"name": "fake-model"}],
    }
    env = provider_env(fake_provider)
    daemon: Daemon | None = await start_daemon(home=home, database_url=database_url, env=env)
    try:
        async with daemon.client() as client:
            assert (await _provider(client, "default"))["has_key"] is True, "the env key"
            put = await client.put("/v1/providers/k", json={**body, "api_key": first})
            assert put.status_code == 200, put.text
            assert "api_key" not in put.json()
            assert put.json()["has_key"] is True
            assert first not in put.text
            assert first not in (await client.get("/v1/providers")).text
            assert stat.S_IMODE(keys_file.stat().st_mode) == 0o600
            assert first in keys_file.read_text()
            assert not await _stored_anywhere(database_url, first), "never in PostgreSQL"

            created = await client.post(
                "/v1/sessions",
                json={"workspace": str(workspace), "provider": "k", "model": "fake-model"},
            )
            sid = created.json()["session_id"]
            assert await _turn_key_headers(client, fake_provider, sid, "t1") == f"Bearer {first}"

            rotated = await client.put("/v1/providers/k", json={**body, "api_key": second})
            assert rotated.status_code == 200
            assert await _turn_key_headers(client, fake_provider, sid, "t2") == f"Bearer {second}"
            kept = await client.put("/v1/providers/k", json=body)  # no api_key: unchanged
            assert kept.json()["has_key"] is True
        assert await daemon.stop() == 0
        daemon = None
        assert first not in keys_file.read_text()

        daemon = await start_daemon(home=home, database_url=database_url, env=env)
        async with daemon.client() as client:
            assert (await _provider(client, "k"))["has_key"] is True, "kept across a restart"
            assert await _turn_key_headers(client, fake_provider, sid, "t3") == f"Bearer {second}"
            deleted = await client.put("/v1/providers/k", json={**body, "api_key": None})
            assert deleted.json()["has_key"] is False
            assert second not in keys_file.read_text()
            assert await _turn_key_headers(client, fake_provider, sid, "t4") == "Bearer no-key"
        logs = "\n".join(daemon.log_lines)
        assert first not in logs and second not in logs, "never logged"
    finally:
        if daemon is not None:
            assert await daemon.stop() == 0
    assert fake_provider.violations == []


async def test_the_key_file_is_hidden_from_every_tool_like_the_token(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    home = tmp_path / "home"
    secret = _key("hunt")
    keys_file = home / "run" / "provider-keys.json"
    hunts = [
        ("read", {"path": str(keys_file)}),
        ("grep", {"pattern": "sk-hunt", "path": str(tmp_path)}),
        ("glob", {"pattern": "**/provider-keys.json", "path": str(tmp_path)}),
        ("bash", {"command": f"cat {keys_file}"}),
        ("bash", {"command": f"grep -r sk-hunt {tmp_path} || true"}),
    ]
    daemon = await start_daemon(
        home=home, database_url=database_url, env=provider_env(fake_provider)
    )
    try:
        async with daemon.client() as client:
            put = await client.put(
                "/v1/providers/k",
                json={
                    "kind": "openai-chat",
                    "base_url": fake_provider.openai_base_url,
                    "models": [{"name": "fake-model"}],
                    "api_key": secret,
                },
            )
            assert put.status_code == 200
            created = await client.post(
                "/v1/sessions",
                json={"workspace": str(workspace), "provider": "k", "model": "fake-model"},
            )
            sid = created.json()["session_id"]
            fake_provider.push(
                *(
                    Reply(tool_calls=(ToolCallSpec(f"call_{i}", name, args),))
                    for i, (name, args) in enumerate(hunts)
                ),
                Reply(text="found nothing"),
            )
            turn_id, _ = await run_turn_and_wait(client, sid, "find the provider key", "hunt")
            turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
            assert turn["status"] == "completed", turn
            everything = (await client.get(f"/v1/sessions/{sid}/messages")).text
        for request in fake_provider.requests:
            assert secret not in orjson.dumps(request.body).decode()
        assert secret not in everything
        results = {
            m["tool_call_id"]: str(m.get("content"))
            for m in fake_provider.bodies[-1]["messages"]  # type: ignore[union-attr]
            if isinstance(m, dict) and m.get("role") == "tool"
        }
        assert "belongs to the OpenWork daemon" in results["call_0"], results["call_0"]
        assert secret not in "\n".join(daemon.log_lines)
    finally:
        assert await daemon.stop() == 0
