"""Providers as they behave in the wild, end to end (issue 14 points 3, 4, 5, 9, 10): `openwork
serve` as a subprocess, PostgreSQL, the official SDKs streaming over loopback to the fake provider
speaking Anthropic Messages or OpenAI Responses."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import httpx

from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import ErrorReply, Reply, ToolCallSpec
from tests.support.daemon import run_turn_and_wait, start_daemon

READ = ToolCallSpec("call_1", "read", {"path": "README.md"})


async def _session(client: httpx.AsyncClient, workspace: Path) -> str:
    response = await client.post("/v1/sessions", json={"workspace": str(workspace)})
    assert response.status_code == 201, response.text
    session_id = response.json()["session_id"]
    assert isinstance(session_id, str)
    return session_id


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "README.md").write_text("# Project X\n")
    return workspace


def _finished(updates: list[dict[str, object]]) -> Mapping[str, object]:
    update = updates[-1]["update"]
    assert isinstance(update, dict) and update["type"] == "turn_finished"
    return update


async def test_an_anthropic_turn_stores_usage_per_submission_and_shows_it_everywhere(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """Point 5: each submission's cache reads and writes are stored, summed per turn and shown in
    ``GET …/turns/{tid}``, ``turn_finished`` and the inspection (last call next to the estimate,
    the session's cache-hit ratio); point 4: every request carries the cache breakpoints; point 3:
    the signed thinking of call 1 goes back first in its assistant message in call 2."""
    fake_provider.push(
        Reply(
            reasoning="read it",
            reasoning_signature="sig-1",
            tool_calls=(READ,),
            input_tokens=100,
            cache_write_tokens=4000,
            output_tokens=7,
        ),
        Reply(
            text="It is Project X.",
            input_tokens=50,
            cached_tokens=4000,
            cache_write_tokens=150,
            output_tokens=5,
        ),
    )
    env = provider_env(
        fake_provider,
        OPENWORK_PROVIDER="anthropic",
        OPENWORK_PROVIDER_BASE_URL=fake_provider.anthropic_base_url,
    )
    daemon = await start_daemon(home=tmp_path / "home", database_url=database_url, env=env)
    try:
        async with daemon.client() as client:
            sid = await _session(client, _workspace(tmp_path))
            turn_id, updates = await run_turn_and_wait(client, sid, "what is this?", "req-1")
            expected = {
                "input_tokens": 4100 + 4200,
                "cached_input_tokens": 4000,
                "cache_write_tokens": 4000 + 150,
                "output_tokens": 12,
                "reasoning_tokens": 0,
            }
            turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
            assert turn["status"] == "completed", turn
            assert turn["usage"] == expected
            finished = _finished(updates)
            assert finished["usage"] == {
                "inputTokens": 8300,
                "cachedInputTokens": 4000,
                "cacheWriteTokens": 4150,
                "outputTokens": 12,
                "reasoningTokens": 0,
            }
            context = (await client.get(f"/v1/sessions/{sid}/context")).json()
            usage = context["usage"]
            last = usage["last_call"]
            assert (last["turn_id"], last["call"]["model_call"]) == (turn_id, 2)
            call = last["call"]
            assert call["usage"] == {
                "input_tokens": 4200,
                "output_tokens": 5,
                "cached_input_tokens": 4000,
                "reasoning_tokens": None,
                "cache_write_tokens": 150,
            }
            assert call["estimated_input_tokens"] > 0
            assert call["shared_prefix_bytes"] > 0  # the second call repeats the first
            # the first call's whole request (~4 100 tokens) was written to the cache and read back
            assert call["cache_miss"] is None, call
            assert usage["session"]["model_calls"] == 2
            assert usage["cache_hit_ratio"] == round(4000 / 8300, 4)
    finally:
        assert await daemon.stop() == 0
    first, second = fake_provider.bodies
    for body in (first, second):
        tools, system, messages = body["tools"], body["system"], body["messages"]
        assert isinstance(tools, list) and isinstance(system, list) and isinstance(messages, list)
        assert tools[-1]["cache_control"] == {"type": "ephemeral"}
        assert system[-1]["cache_control"] == {"type": "ephemeral"}
        assert messages[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    messages = second["messages"]
    assert isinstance(messages, list)
    (assistant,) = [m for m in messages if m["role"] == "assistant"]
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "read it",
        "signature": "sig-1",
    }


async def test_a_responses_turn_keeps_encrypted_reasoning_and_survives_its_refusal(
    tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """Points 3, 4, 10: ``store: false`` with encrypted reasoning included; call 2 sends it back
    without ids; the server's ``invalid_encrypted_content`` is answered by one resubmission
    without it and the turn completes; ``prompt_cache_key`` is the session id."""
    fake_provider.push(
        Reply(reasoning="read it", reasoning_encrypted="enc-1", tool_calls=(READ,)),
        ErrorReply(status=400, code="invalid_encrypted_content", message="cannot decrypt"),
        Reply(text="It is Project X.", reasoning_tokens=4),
    )
    env = provider_env(fake_provider, OPENWORK_PROVIDER="openai-responses")
    daemon = await start_daemon(home=tmp_path / "home", database_url=database_url, env=env)
    try:
        async with daemon.client() as client:
            sid = await _session(client, _workspace(tmp_path))
            turn_id, updates = await run_turn_and_wait(client, sid, "what is this?", "req-1")
            turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
            assert (turn["status"], turn["final_text"]) == ("completed", "It is Project X.")
            assert turn["usage"]["reasoning_tokens"] == 4
            assert _finished(updates)["outcome"] == {
                "status": "completed",
                "finalText": "It is Project X.",
            }
    finally:
        assert await daemon.stop() == 0
    first, refused, resubmitted = fake_provider.bodies
    for body in (first, refused, resubmitted):
        assert body["store"] is False
        assert body["include"] == ["reasoning.encrypted_content"]
        assert body["prompt_cache_key"] == sid
    refused_items = refused["input"]
    resubmitted_items = resubmitted["input"]
    assert isinstance(refused_items, list) and isinstance(resubmitted_items, list)
    reasoning = [i for i in refused_items if i.get("type") == "reasoning"]
    assert reasoning == [
        {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "read it"}],
            "encrypted_content": "enc-1",
        }
    ]
    assert resubmitted_items == [i for i in refused_items if i.get("type") != "reasoning"]
    assert not any("id" in item for item in refused_items)
