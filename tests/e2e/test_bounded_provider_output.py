"""Bounded provider output, through ``openwork serve`` (issue 22 point 6; model-providers.md §2):
a tool call whose streamed arguments go over 1 MiB ends the model call as a provider protocol
error and the turn fails with the code of a broken stream (``model_error``, session-runtime.md
§4), while the daemon keeps answering ``GET /v1/health``; arguments under the bound work as
before. Each of the three wire protocols, against the fake provider."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from openwork_core.models.adapters.streaming import MAX_TOOL_CALLS
from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply, ToolCallSpec
from tests.support.daemon import run_turn_and_wait, start_daemon

KINDS = ("openai-chat", "openai-responses", "anthropic")
MiB = 1024 * 1024
CHUNK = 64 * 1024
"""Characters per streamed argument delta (the fake's chunking)."""


def _write(path: str, size: int) -> Reply:
    content = "x" * size
    call = ToolCallSpec("call_big", "write", {"path": path, "content": content})
    return Reply(tool_calls=(call,), chunk_chars=CHUNK)


async def _answers_health_throughout(client: httpx.AsyncClient, done: asyncio.Event) -> int:
    """Polls ``/v1/health`` until ``done``; every answer must be a 200. How many answered."""
    answered = 0
    while not done.is_set():
        response = await client.get("/v1/health")
        assert response.status_code == 200, response.text
        answered += 1
    return answered


async def _turn_with_health(
    client: httpx.AsyncClient, sid: str, request: str
) -> tuple[dict[str, object], int]:
    done = asyncio.Event()
    poller = asyncio.get_running_loop().create_task(_answers_health_throughout(client, done))
    try:
        turn_id, _ = await run_turn_and_wait(client, sid, "write it", request)
    finally:
        done.set()
        answered = await poller
    turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
    assert isinstance(turn, dict)
    return turn, answered


@pytest.mark.parametrize("kind", KINDS)
async def test_arguments_over_one_mib_fail_the_turn_as_a_protocol_error_and_the_daemon_answers(
    kind: str, tmp_path: Path, database_url: str, fake_provider: FakeProvider
) -> None:
    """model-providers.md §2, issue 22 point 6: a 2 MiB ``write`` argument fails the turn
    ``model_error`` with the provider protocol error, nothing is written, and ``/v1/health``
    answers all along; a response of more than ``MAX_TOOL_CALLS`` calls fails the same way
    before any of them runs; 900 KiB arguments are written as before."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    calls = MAX_TOOL_CALLS + 1
    many = tuple(
        ToolCallSpec(f"call_{n}", "write", {"path": f"f{n}", "content": ""}) for n in range(calls)
    )
    fake_provider.push(
        _write("big.txt", 2 * MiB),
        Reply(tool_calls=many),
        _write("fits.txt", 900 * 1024),
        Reply(text="written"),
    )  # a window that holds the 900 KiB call (no compaction)
    daemon = await start_daemon(
        home=tmp_path / "home", database_url=database_url, env=provider_env(fake_provider)
    )
    try:
        async with daemon.client() as client:
            model = {"name": "fake-model", "context_window": 4 * MiB, "max_output_tokens": 32_000}
            body = {"kind": kind, "base_url": fake_provider.url, "models": [model]}
            assert (await client.put("/v1/providers/bounded", json=body)).is_success
            created = await client.post(
                "/v1/sessions",
                json={"workspace": str(workspace), "provider": "bounded", "model": "fake-model"},
            )
            assert created.status_code == 201, created.text
            sid = created.json()["session_id"]

            turn, answered = await _turn_with_health(client, sid, "req-big")
            assert (turn["status"], turn["error_code"]) == ("failed", "model_error")
            message = str(turn["message"])
            assert "provider protocol error" in message
            assert f"arguments over {MiB} bytes" in message
            assert answered >= 1
            assert not (workspace / "big.txt").exists()

            turn, _ = await _turn_with_health(client, sid, "req-many")
            assert (turn["status"], turn["error_code"]) == ("failed", "model_error")
            assert f"over {MAX_TOOL_CALLS} tool calls" in str(turn["message"])
            assert list(workspace.iterdir()) == []

            turn, answered = await _turn_with_health(client, sid, "req-fits")
            assert (turn["status"], turn["final_text"]) == ("completed", "written"), turn
            assert (workspace / "fits.txt").read_text() == "x" * (900 * 1024)
            assert answered >= 1
    finally:
        assert await daemon.stop() == 0
