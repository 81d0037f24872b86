"""The real window (issue 14 point 8): after start, in the background, the daemon asks a local
server which window it serves (Ollama, llama.cpp, vLLM, LM Studio); a configured window larger
than that is a warning and the smaller one wins; the probe never delays the start."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import orjson
import pytest
from structlog.testing import capture_logs

from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import ProviderModel, ProviderSettings
from tests.fakes.fake_local_server import FakeLocalServer, Server
from tests.support.runtime import TEST_PROVIDER, runtime

MODEL = "scripted-model"


@pytest.mark.parametrize(
    ("server", "base_suffix"),
    [("ollama", "/v1"), ("llama.cpp", ""), ("vllm", "/v1/"), ("lm-studio", "/v1")],
)
async def test_a_smaller_served_window_wins_over_the_configured_one_with_a_warning(
    store: PostgresStore, tmp_path: Path, server: Server, base_suffix: str
) -> None:
    with FakeLocalServer(server, model=MODEL, window=8_192) as local, capture_logs() as logs:
        provider = replace(TEST_PROVIDER, base_url=local.url + base_suffix)
        async with runtime(store, tmp_path, provider=provider) as rt:
            sid = await rt.new_session()
            await rt.window_probed(provider.id)
            record = await rt.core.get_session(sid)
            model = await rt.core.resolve_model(record)
            assert model.capabilities.context_window_tokens == 8_192
            assert model.capabilities.max_output_tokens == 1_024  # issue 24: max(1 024, ÷ 8)
            inspection = await rt.core.inspect_context_window(sid)
            assert orjson.loads(inspection.to_json())["limits"]["context_window"] == 8_192
    warnings = [e for e in logs if e["event"] == "provider.model_warning"]
    assert [w["code"] for w in warnings] == ["served_window_smaller"]
    assert f"{server} serves a window of 8192 tokens, smaller than the 200000" in str(
        warnings[0]["message"]
    )


async def test_a_larger_served_window_changes_nothing_and_warns_nothing(
    store: PostgresStore, tmp_path: Path
) -> None:
    with FakeLocalServer("vllm", model=MODEL, window=1_000_000) as local, capture_logs() as logs:
        provider = replace(TEST_PROVIDER, base_url=local.url)
        async with runtime(store, tmp_path, provider=provider) as rt:
            sid = await rt.new_session()
            await rt.window_probed(provider.id)
            model = await rt.core.resolve_model(await rt.core.get_session(sid))
            assert model.capabilities.context_window_tokens == 200_000
    assert [e["tokens"] for e in logs if e["event"] == "window_probe.served"] == [1_000_000]
    assert not [e for e in logs if e["event"] == "provider.model_warning"]


async def test_the_probe_runs_after_the_start_and_applies_when_the_server_answers(
    store: PostgresStore, tmp_path: Path
) -> None:
    with FakeLocalServer("llama.cpp", model=MODEL, window=4_096, hold=True) as local:
        provider = replace(TEST_PROVIDER, base_url=local.url)
        async with runtime(store, tmp_path, provider=provider) as rt:  # started: not waiting
            sid = await rt.new_session()
            record = await rt.core.get_session(sid)
            before = await rt.core.resolve_model(record)
            assert before.capabilities.context_window_tokens == 200_000
            local.release()
            await rt.window_probed(provider.id)
            after = await rt.core.resolve_model(record)
            assert after.capabilities.context_window_tokens == 4_096


async def test_a_put_provider_probes_again_and_a_catalog_model_needs_no_numbers(
    store: PostgresStore, tmp_path: Path
) -> None:
    with FakeLocalServer("ollama", model="qwen3-coder:30b", window=16_384) as local:
        async with runtime(store, tmp_path) as rt:
            provider = replace(
                TEST_PROVIDER,
                id="ollama",
                base_url=local.url,
                models=(ProviderModel(name="qwen3-coder:30b"),),
                settings=ProviderSettings(max_retries=0),
            )
            await rt.core.put_provider(provider)
            await rt.window_probed("ollama")
            record = await rt.core.create_session(
                workspace=str(rt.workspace),
                provider="ollama",
                model="qwen3-coder:30b",
                provider_named=True,
            )
            model = await rt.core.resolve_model(record)
            assert model.capabilities.context_window_tokens == 16_384, "served, below the catalog"
            assert ("POST", "/api/show", {"model": "qwen3-coder:30b"}) in local.asked
            off = replace(provider, settings=ProviderSettings(probe_served_window=False))
            await rt.core.put_provider(off)
            await rt.window_probed("ollama")
            model = await rt.core.resolve_model(record)
            assert model.capabilities.context_window_tokens == 262_144, "the catalog's window"
