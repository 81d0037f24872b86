"""Errors a user can act on, through ``openwork serve`` (issue 14 point 6): a bad key, an
unreachable server, a rate limit that outlasts the retries and an unknown model each end the
turn with their own code (``GET …/turns/{tid}`` and ``turn_finished``); ``POST /v1/sessions``
naming an unknown provider or model is refused 400 with nothing written."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.provider_error_fixtures import error_fixture
from tests.support.daemon import run_turn_and_wait, start_daemon
from tests.support.ports import refused_port


async def _session(client: httpx.AsyncClient, workspace: Path, provider: str) -> str:
    body = {"workspace": str(workspace), "provider": provider, "model": "fake-model"}
    created = await client.post("/v1/sessions", json=body)
    assert created.status_code == 201, created.text
    sid = created.json()["session_id"]
    assert isinstance(sid, str)
    return sid


async def _failed_turn(client: httpx.AsyncClient, sid: str, request: str) -> tuple[str, str]:
    """The failed turn's (error_code, message) from GET, checked against its turn_finished."""
    turn_id, updates = await run_turn_and_wait(client, sid, "hello", request)
    finished = updates[-1]["update"]
    assert isinstance(finished, dict)
    turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
    assert turn["status"] == "failed"
    assert finished["outcome"]["code"] == turn["error_code"]
    return turn["error_code"], turn["message"]


async def test_each_provider_failure_ends_the_turn_with_a_code_the_user_can_act_on(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with refused_port() as port:
        gone = f"http://127.0.0.1:{port}"
        daemon = await start_daemon(
            home=tmp_path / "home", database_url=database_url, env=provider_env(fake_provider)
        )
        try:
            async with daemon.client() as client:
                model = [{"name": "fake-model"}]
                for provider_id, base_url, settings in (
                    ("here", fake_provider.url, {"max_retries": 1}),
                    ("gone", gone, {"max_retries": 0}),
                ):
                    body = {
                        "kind": "openai-chat",
                        "base_url": base_url,
                        "models": model,
                        "settings": settings,
                    }
                    assert (await client.put(f"/v1/providers/{provider_id}", json=body)).is_success
                here = await _session(client, workspace, "here")

                fake_provider.push(error_fixture("openai_invalid_api_key").reply())
                code, _ = await _failed_turn(client, here, "auth")
                assert code == "provider_auth_failed"

                fake_provider.push(error_fixture("ollama_model_not_found").reply())
                code, message = await _failed_turn(client, here, "model")
                assert code == "model_not_found"
                assert f"{fake_provider.url}/v1/chat/completions" in message, "names the URL"

                limited = error_fixture("openai_rate_limited").reply(
                    headers=(("retry-after-ms", "5"),)
                )
                before = len(fake_provider.requests)
                fake_provider.push(limited, limited)
                code, _ = await _failed_turn(client, here, "rate")
                assert code == "provider_rate_limited"
                assert len(fake_provider.requests) - before == 2, "max_retries 1: two attempts"

                code, message = await _failed_turn(
                    client, await _session(client, workspace, "gone"), "x"
                )
                assert code == "provider_unreachable"
                assert gone in message
        finally:
            assert await daemon.stop() == 0
    assert fake_provider.violations == []


async def test_a_session_naming_an_unknown_provider_or_model_is_refused_and_nothing_written(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=database_url, env=provider_env(fake_provider)
    )
    try:
        async with daemon.client() as client:
            ws = str(workspace)
            refused = [
                await client.post("/v1/sessions", json={"workspace": ws, "provider": "nope"}),
                await client.post(
                    "/v1/sessions", json={"workspace": ws, "provider": "default", "model": "gpt-9"}
                ),
                await client.post("/v1/sessions", json={"workspace": ws, "model": "gpt-9"}),
            ]
            assert [(r.status_code, r.json()["error"]["code"]) for r in refused] == [
                (400, "provider_not_found"),
                (400, "model_not_found"),
                (400, "model_not_found"),
            ]
            assert "fake-model" in refused[1].json()["error"]["message"], "lists the known models"
            assert (await client.get("/v1/sessions")).json()["sessions"] == []
            fine = await client.post("/v1/sessions", json={"workspace": ws, "model": "fake-model"})
            assert fine.status_code == 201
    finally:
        assert await daemon.stop() == 0
