"""Issue 14 points 1 and 2 through ``openwork serve``, for each wire protocol (real SDK, real
HTTP, streaming): the vendor's own overflow body → summarise → resubmit once → the turn completes
(compaction.md §1, §8.2); the provider's base URL given in the form users paste (with ``/v1``
for Anthropic, without it for OpenAI) reaches the right path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openwork_core.session.compaction.compacted_view import SUMMARY_PREFIX
from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply
from tests.fakes.provider_error_fixtures import error_fixture
from tests.support.daemon import run_turn_and_wait, start_daemon
from tests.unit.compaction.compaction_support import valid_summary

CASES = [
    # protocol, overflow fixture, base URL suffix as a user would paste it, the request path
    ("openai-chat", "llamacpp_exceed_context_size", "", "/v1/chat/completions"),
    ("openai-responses", "openai_responses_context_length_exceeded", "/", "/v1/responses"),
    ("anthropic", "anthropic_prompt_too_long", "/v1", "/v1/messages"),
]


@pytest.mark.parametrize(("protocol", "fixture", "suffix", "path"), CASES)
async def test_a_vendor_overflow_compacts_resubmits_once_and_the_turn_completes(
    tmp_path: Path,
    database_url: str,
    fake_provider: FakeProvider,
    protocol: str,
    fixture: str,
    suffix: str,
    path: str,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=database_url, env=provider_env(fake_provider)
    )
    try:
        async with daemon.client() as client:
            put = await client.put(
                "/v1/providers/wild",
                json={
                    "kind": protocol,
                    "base_url": fake_provider.url + suffix,
                    "models": [{"name": "fake-model"}],
                    "api_key": "sk-runtime-1",
                },
            )
            assert put.status_code == 200, put.text
            created = await client.post(
                "/v1/sessions",
                json={"workspace": str(workspace), "provider": "wild", "model": "fake-model"},
            )
            assert created.status_code == 201, created.text
            sid = created.json()["session_id"]
            fake_provider.push(
                Reply(text="noted"),
                error_fixture(fixture).reply(),
                Reply(text=valid_summary(), chunk_chars=400),
                Reply(text="fits now"),
            )
            # history a summary can shrink (issue 24: compaction only when it can help)
            await run_turn_and_wait(client, sid, "earlier context " * 200, "r0")
            turn_id, updates = await run_turn_and_wait(client, sid, "a long request", "r1")
            turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
            assert (turn["status"], turn["error_code"], turn["final_text"]) == (
                "completed",
                None,
                "fits now",
            )
            phases = [u["update"].get("phase") for u in updates]  # type: ignore[union-attr]
            assert "compacting" in phases
    finally:
        assert await daemon.stop() == 0
    requests = fake_provider.requests
    assert [r.path for r in requests] == [path, path, path, path]
    _earlier, first, _summary, resubmitted = (json.dumps(r.body) for r in requests)
    assert SUMMARY_PREFIX not in first
    assert SUMMARY_PREFIX in resubmitted, "the resubmission carries the summary"
    assert all("sk-runtime-1" in " ".join(r.headers.values()) for r in requests), "the PUT key"
    assert fake_provider.violations == []
