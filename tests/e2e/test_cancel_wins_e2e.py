"""Cancel wins everywhere (issue 24 point 3) through ``openwork serve`` and a scripted provider
on loopback: whatever the turn is waiting on — a summary being written, the SDK's back-off
before a retry, a provider that has not answered yet — ``POST …/cancel`` (202) ends the turn
``cancelled`` at once (each wait below is bounded far under what the turn would otherwise take),
and the HTTP stream it was waiting on is closed (the server would stop generating)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import Scripted
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import ErrorReply, Gate, Held, Reply
from tests.support.daemon import run_turn_and_wait, start_turn
from tests.support.sse import SseEvent, open_events

pytestmark = pytest.mark.asyncio(loop_scope="module")

CANCEL_BOUND_S = 5.0
"""How long a cancelled turn may take to end here (the promise is 1 s; the machine is shared).
Every wait it cancels would otherwise last 20 s or more."""


async def _session(client: httpx.AsyncClient, tmp_path: Path) -> str:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    created = await client.post("/v1/sessions", json={"workspace": str(workspace)})
    assert created.status_code == 201, created.text
    sid = created.json()["session_id"]
    assert isinstance(sid, str)
    return sid


def _finished(turn_id: str) -> Callable[[SseEvent], bool]:
    return lambda e: not e.is_resync and e.turn_id == turn_id and e.type == "turn_finished"


async def _cancel_when(
    client: httpx.AsyncClient, fake: FakeProvider, sid: str, request_number: int
) -> tuple[str, list[SseEvent], float]:
    """Start a turn, cancel it once the fake holds its ``request_number``-th request; the turn's
    updates through ``turn_finished`` and the seconds from the 202 of the cancel to it."""
    async with open_events(client, f"/v1/sessions/{sid}/events") as events:
        turn_id = await start_turn(client, sid, "go on", f"req-{request_number}-{sid[-6:]}")
        await fake.wait_for_requests(request_number, timeout=30)
        cancel = await client.post(f"/v1/sessions/{sid}/turns/{turn_id}/cancel")
        assert cancel.status_code == 202, cancel.text
        accepted = time.monotonic()
        updates = await events.until(_finished(turn_id), timeout=CANCEL_BOUND_S)
        return turn_id, updates, time.monotonic() - accepted


async def _small_window_session(
    client: httpx.AsyncClient, fake: FakeProvider, tmp_path: Path
) -> tuple[str, int]:
    """A session on a 16 384-token provider (1 024 reserved) and the tokens its first request
    leaves under the compaction line."""
    put = await client.put(
        "/v1/providers/small",
        json={
            "kind": "openai-chat",
            "base_url": fake.openai_base_url,
            "models": [
                {"name": "fake-model", "context_window": 16_384, "max_output_tokens": 1_024}
            ],
            "settings": {"probe_served_window": False},
        },
    )
    assert put.status_code == 200, put.text
    workspace = tmp_path / "ws"
    workspace.mkdir()
    created = await client.post(
        "/v1/sessions",
        json={"workspace": str(workspace), "provider": "small", "model": "fake-model"},
    )
    assert created.status_code == 201, created.text
    sid = created.json()["session_id"]
    context = (await client.get(f"/v1/sessions/{sid}/context")).json()
    used = context["budget"]["estimated_input_tokens"] + context["budget"]["reserved_output_tokens"]
    line = min(
        context["limits"]["auto_compact_token_limit"], context["limits"]["effective_input_tokens"]
    )
    return sid, line - used


async def test_a_cancel_while_the_summary_is_written_ends_the_turn_cancelled_and_closes_its_stream(
    scripted: Scripted, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Issue 24 point 3: the second turn crosses the compaction line and its summary is held by
    the provider; the cancel ends the turn ``cancelled`` (not ``compaction_error`` after three
    attempts), the summary's connection is hung up, no checkpoint is written, and no second
    summary attempt is made."""
    fake = scripted.fake
    sid, room = await _small_window_session(client, fake, tmp_path)
    half = "word " * (room * 4 // 2 // 5)  # about half the room each (⌈bytes / 4⌉ tokens)
    fake.push(Reply(text="noted"))
    await run_turn_and_wait(client, sid, half, f"req-earlier-{sid[-6:]}")
    before = len(fake.requests)
    gate = Gate()
    fake.push(Held(Reply(text="x"), gate))
    try:
        async with open_events(client, f"/v1/sessions/{sid}/events") as events:
            turn_id = await start_turn(client, sid, half, f"req-over-{sid[-6:]}")
            await fake.wait_for_requests(before + 1, timeout=30)
            summary = fake.requests[before].body
            assert "conversation_summary" in str(summary.get("messages")), "the summary request"
            cancel = await client.post(f"/v1/sessions/{sid}/turns/{turn_id}/cancel")
            assert cancel.status_code == 202, cancel.text
            accepted = time.monotonic()
            updates = await events.until(_finished(turn_id), timeout=CANCEL_BOUND_S)
            took = time.monotonic() - accepted
        await fake.wait_for_hang_up(before + 1, timeout=CANCEL_BOUND_S)
    finally:
        gate.release()
    assert updates[-1].update["outcome"]["status"] == "cancelled"
    assert "compacting" in [e.update.get("phase") for e in updates]
    turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
    assert (turn["status"], turn["error_code"]) == ("cancelled", None)
    assert (await client.get(f"/v1/sessions/{sid}/compactions")).json()["compactions"] == []
    assert len(fake.requests) == before + 1, "no second summary attempt"
    print(f"cancel during a summary: the turn ended {took:.3f} s after the 202")


async def test_a_cancel_during_the_retry_back_off_ends_the_turn_before_the_retry(
    scripted: Scripted, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Issue 24 point 3: a 503 with ``retry-after: 30`` makes the SDK wait before its retry; the
    cancel ends the turn ``cancelled`` during that wait and the retry is never sent."""
    fake = scripted.fake
    sid = await _session(client, tmp_path)
    before = len(fake.requests)
    fake.push(ErrorReply(status=503, code="overloaded", headers=(("retry-after", "30"),)))
    turn_id, updates, took = await _cancel_when(client, fake, sid, before + 1)
    assert updates[-1].update["outcome"]["status"] == "cancelled"
    assert len(fake.requests) == before + 1, "the retry was never sent"
    turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
    assert turn["status"] == "cancelled"
    print(f"cancel during a retry back-off: the turn ended {took:.3f} s after the 202")


async def test_a_cancel_before_the_provider_answers_ends_the_turn_and_hangs_up(
    scripted: Scripted, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Issue 24 point 3: the provider accepted the connection and sends nothing (a server
    loading its model, a slow connect); the cancel ends the turn and closes the connection."""
    fake = scripted.fake
    sid = await _session(client, tmp_path)
    before = len(fake.requests)
    gate = Gate()
    fake.push(Held(Reply(text="too late"), gate))
    try:
        turn_id, updates, took = await _cancel_when(client, fake, sid, before + 1)
        await fake.wait_for_hang_up(before + 1, timeout=CANCEL_BOUND_S)
    finally:
        gate.release()
    assert updates[-1].update["outcome"]["status"] == "cancelled"
    turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
    assert turn["status"] == "cancelled"
    print(f"cancel before the provider answered: the turn ended {took:.3f} s after the 202")
