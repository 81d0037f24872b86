"""Providers over HTTP (daemon-api.md §1–§2): the env bootstrap creates `default`; PUT validates
capabilities (model-providers.md §4); keys are never stored or returned, only the variable name."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.support.daemon import start_daemon


async def test_providers_are_listed_upserted_and_validated_and_never_carry_a_key(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=database_url, env=provider_env(fake_provider)
    )
    try:
        async with daemon.client() as client:
            (default,) = (await client.get("/v1/providers")).json()["providers"]
            assert default["id"] == "default"
            assert default["kind"] == "openai-chat"
            assert default["api_key_env"] == "OPENWORK_PROVIDER_API_KEY"
            assert default["models"][0]["context_window"] == 200_000
            response_text = (await client.get("/v1/providers")).text
            assert "fake-key" not in response_text
            body = {
                "kind": "anthropic",
                "base_url": "http://127.0.0.1:9",
                "api_key_env": "ANTHROPIC_KEY",
                "models": [
                    {"name": "claude", "context_window": 200_000, "max_output_tokens": 32_000}
                ],
            }
            put = await client.put("/v1/providers/work", json=body)
            assert put.status_code == 200
            assert put.json()["id"] == "work"
            too_big = {
                **body,
                "models": [{"name": "m", "context_window": 1_000, "max_output_tokens": 1_000}],
            }
            refused = await client.put("/v1/providers/work", json=too_big)
            assert (refused.status_code, refused.json()["error"]["code"]) == (
                422,
                "invalid_request",
            )
            slash = await client.put("/v1/providers/a%2Fb", json=body)
            assert slash.status_code in (404, 422)
            listed = [p["id"] for p in (await client.get("/v1/providers")).json()["providers"]]
            assert listed == ["default", "work"]
    finally:
        assert await daemon.stop() == 0
