"""Live updates end to end (issue 6 item 4): `openwork serve` as a subprocess, the official openai
SDK over loopback to the fake provider, every SessionUpdate read over real HTTP + SSE.

daemon-api.md §2 (routes, errors, `…/events` replay and `resync`), §4 (the envelope);
session-runtime.md §7 (SessionUpdate v7, per-session sequences, the 512-entry ring buffer),
§8 (SessionSnapshot); DESIGN.md §2 "SSE" (no cursor → live only; a cursor ahead of the current
sequence or behind the ring buffer → `resync` first; `context_updated` is our addition).

One daemon serves the whole module (each start costs seconds); every test works in its own
sessions, pushes its own script steps and leaves none behind.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from openwork_core.context.world_state.sandbox_policy import SANDBOX_POLICY_TAG
from tests.e2e.conftest import provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Gate, Held, Reply, ToolCallSpec
from tests.support.daemon import Daemon, start_daemon, start_turn
from tests.support.postgres import PgCluster
from tests.support.sse import SseEvent, SseReader, open_events
from tests.support.wire import chat_user_texts

pytestmark = pytest.mark.asyncio(loop_scope="module")

UPDATE_TYPES = frozenset(
    {
        "turn_started",
        "phase_changed",
        "text_delta",
        "reasoning_delta",
        "draft_cleared",
        "tool_call_started",
        "tool_call_progress",
        "tool_call_finished",
        "permission_requested",
        "permission_resolved",
        "plan_updated",
        "context_updated",
        "turn_finished",
    }
)
ENVELOPE_KEYS = {"version", "sessionId", "turnId", "sequence", "occurredAtMs", "update"}
RING = 512


@dataclass
class Live:
    daemon: Daemon
    fake: FakeProvider


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def live(
    pg_cluster: PgCluster, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Live]:
    home = tmp_path_factory.mktemp("live-updates") / "home"
    database_url = await pg_cluster.new_database()
    with FakeProvider() as fake:
        daemon = await start_daemon(home=home, database_url=database_url, env=provider_env(fake))
        try:
            yield Live(daemon, fake)
        finally:
            assert await daemon.stop() == 0
            unexpected = [
                line
                for line in daemon.log_lines
                if not line.startswith("{") or '"level": "error"' in line
            ]
            assert unexpected == [], "the daemon logged errors or non-JSON lines (a leaked task?)"


@pytest_asyncio.fixture(loop_scope="module")
async def client(live: Live) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the shared daemon; afterwards the test's script is used up and no request broke
    a wire invariant."""
    async with live.daemon.client() as http:
        yield http
    assert live.fake.remaining_steps == 0
    assert live.fake.violations == []


# -- helpers ---------------------------------------------------------------------------------
async def _session(client: httpx.AsyncClient, tmp_path: Path, name: str = "ws") -> str:
    workspace = tmp_path / name
    workspace.mkdir()
    (workspace / "README.md").write_text("# Project X\n")
    response = await client.post("/v1/sessions", json={"workspace": str(workspace)})
    assert response.status_code == 201, response.text
    session_id = response.json()["session_id"]
    assert isinstance(session_id, str)
    return session_id


async def _session_body(client: httpx.AsyncClient, sid: str) -> dict[str, Any]:
    response = await client.get(f"/v1/sessions/{sid}")
    assert response.status_code == 200, response.text
    body = response.json()
    assert isinstance(body, dict)
    return body


async def _snapshot(client: httpx.AsyncClient, sid: str) -> dict[str, Any]:
    snapshot = (await _session_body(client, sid))["snapshot"]
    assert isinstance(snapshot, dict)
    return snapshot


def _events_path(sid: str) -> str:
    return f"/v1/sessions/{sid}/events"


def _finished(turn_id: str) -> Callable[[SseEvent], bool]:
    return lambda e: not e.is_resync and e.turn_id == turn_id and e.type == "turn_finished"


def _reached(sequence: int) -> Callable[[SseEvent], bool]:
    return lambda e: not e.is_resync and e.sequence >= sequence


def _sequences(events: list[SseEvent]) -> list[int]:
    return [e.sequence for e in events]


async def _observed_turn(
    client: httpx.AsyncClient, events: SseReader, sid: str, request_id: str
) -> tuple[str, list[SseEvent]]:
    """Start a turn (its script step already pushed) and read ``events`` to its turn_finished."""
    turn_id = await start_turn(client, sid, "go", request_id)
    return turn_id, await events.until(_finished(turn_id))


async def _completed_turn(
    client: httpx.AsyncClient, fake: FakeProvider, sid: str, request_id: str
) -> tuple[str, list[SseEvent]]:
    """One small turn, observed live from its first update to its turn_finished."""
    fake.push(Reply(text="done"))
    async with open_events(client, _events_path(sid)) as events:
        return await _observed_turn(client, events, sid, request_id)


async def _held_request(fake: FakeProvider, count: int) -> None:
    """Until the fake provider has received (and holds) its ``count``-th request."""
    await fake.wait_for_requests(count, timeout=15)


def _collapsed_kinds(events: list[SseEvent]) -> list[str]:
    """Update kinds in order, phases spelled out, a run of text deltas as one."""
    kinds: list[str] = []
    for event in events:
        kind = event.type
        if kind == "phase_changed":
            kind = f"phase_changed:{event.update['phase']}"
        if kind != "text_delta" or not kinds or kinds[-1] != kind:
            kinds.append(kind)
    return kinds


def _error(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


async def _completed_turn_on(
    client: httpx.AsyncClient, fake: FakeProvider, events: SseReader, sid: str, request_id: str
) -> tuple[str, list[SseEvent]]:
    """One small turn observed on an already open stream."""
    fake.push(Reply(text="done"))
    return await _observed_turn(client, events, sid, request_id)


def _assert_resync(event: SseEvent, sid: str, *, current: int) -> None:
    """A `resync` event: its SSE name, `id:` the current sequence and a v7 envelope with update
    type `resync`."""
    assert event.event == "resync"
    assert event.id == str(current)
    assert event.is_resync
    assert event.data["version"] == 7
    assert event.data["sessionId"] == sid
    assert event.update == {"type": "resync"}
    assert event.sequence == current, "a resync carries the session's current sequence"


# -- §4 / §7: the envelope and the order of a turn's updates --------------------------------
async def test_a_tool_call_turn_streams_gapless_v7_envelopes_in_order_whose_sse_id_is_the_sequence(
    live: Live, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """daemon-api.md §4, session-runtime.md §7: every `data:` is a v7 envelope of this session and
    turn; sequences run 1, 2, 3… with no gap; `id:` is the sequence; the kinds follow the loop
    (model → draft cleared → tool → model → finished), a `context_updated` with the prepared
    request's budget before each model call."""
    sid = await _session(client, tmp_path)
    live.fake.push(
        Reply(
            text="Let me read it.",
            chunk_chars=3,
            tool_calls=(ToolCallSpec("call_1", "read", {"path": "README.md"}),),
        ),
        Reply(text="It is Project X.", chunk_chars=2),
    )
    before_ms = int(time.time() * 1000)
    async with open_events(client, _events_path(sid)) as events:
        turn_id = await start_turn(client, sid, "what is this?", "req-1")
        updates = await events.until(_finished(turn_id))
    after_ms = int(time.time() * 1000)

    assert _sequences(updates) == list(range(1, len(updates) + 1))
    for event in updates:
        assert event.event == "message"
        assert event.id == str(event.sequence)
        assert set(event.data) == ENVELOPE_KEYS
        assert event.data["version"] == 7
        assert event.data["sessionId"] == sid
        assert event.turn_id == turn_id
        assert event.type in UPDATE_TYPES
        assert before_ms <= event.data["occurredAtMs"] <= after_ms
    stamps = [e.data["occurredAtMs"] for e in updates]
    assert stamps == sorted(stamps)

    assert _collapsed_kinds(updates) == [
        "turn_started",
        "phase_changed:running_model",
        "context_updated",
        "text_delta",
        # a response of effect-free calls (read) is written with their results after they
        # ran: its draft is cleared once it is durable, before the results are announced
        "phase_changed:running_tools",
        "tool_call_started",
        "draft_cleared",
        "tool_call_finished",
        "phase_changed:running_model",
        "context_updated",
        "text_delta",
        "draft_cleared",
        "turn_finished",
    ]
    assert updates[0].update == {"type": "turn_started", "clientRequestId": "req-1"}
    cleared = [i for i, e in enumerate(updates) if e.type == "draft_cleared"]
    drafts = [
        "".join(e.update["delta"] for e in updates[start:end] if e.type == "text_delta")
        for start, end in ((0, cleared[0]), (cleared[0], cleared[1]))
    ]
    assert drafts == ["Let me read it.", "It is Project X."]
    deltas = [e.update["delta"] for e in updates if e.type == "text_delta"]
    assert deltas[:2] == ["Let", " me"], "one text_delta per streamed chunk"

    call = next(e.update for e in updates if e.type == "tool_call_started")["toolCall"]
    finished = next(e.update for e in updates if e.type == "tool_call_finished")
    assert (call["providerCallId"], call["name"]) == ("call_1", "read")
    assert finished["toolCallId"] == call["toolCallId"]
    assert (finished["providerCallId"], finished["toolName"]) == ("call_1", "read")
    assert (finished["status"], finished["isError"]) == ("succeeded", False)
    assert "# Project X" in finished["output"]

    budgets = [e.update for e in updates if e.type == "context_updated"]
    inspection = (await client.get(f"/v1/sessions/{sid}/context")).json()["budget"]
    for budget in budgets:
        assert set(budget) == {
            "type",
            "systemContextTokens",
            "conversationTokens",
            "toolSurfaceTokens",
            "estimatedInputTokens",
            "reservedOutputTokens",
            "autoCompactPercent",
        }
        assert budget["estimatedInputTokens"] == (
            budget["systemContextTokens"]
            + budget["conversationTokens"]
            + budget["toolSurfaceTokens"]
        )
        assert budget["systemContextTokens"] == inspection["system_context_tokens"]
        assert budget["toolSurfaceTokens"] == inspection["tool_surface_tokens"]
        assert budget["reservedOutputTokens"] == inspection["reserved_output_tokens"]
        assert 0 < budget["autoCompactPercent"] < 100
    assert budgets[1]["conversationTokens"] > budgets[0]["conversationTokens"]
    finished = updates[-1].update
    assert {k: v for k, v in finished.items() if k != "usage"} == {
        "type": "turn_finished",
        "outcome": {"status": "completed", "finalText": "It is Project X."},
    }
    assert set(finished["usage"]) == {  # issue 14 point 5
        "inputTokens",
        "cachedInputTokens",
        "cacheWriteTokens",
        "outputTokens",
        "reasoningTokens",
    }
    assert (await _snapshot(client, sid))["lastUpdateSequence"] == updates[-1].sequence


# -- §2: replay after Last-Event-ID / after_sequence ----------------------------------------
async def test_reconnecting_with_last_event_id_or_after_sequence_replays_exactly_what_was_missed(
    live: Live, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """daemon-api.md §2, session-runtime.md §7: `Last-Event-ID: N` or `?after_sequence=N` replays
    N+1… from the ring buffer and goes on live, with no gap and no duplicate, across the seam
    between replay and live too."""
    sid = await _session(client, tmp_path)
    requests = len(live.fake.requests)
    gate = Gate()
    live.fake.push(Held(Reply(text="After the reconnect.", chunk_chars=2), gate))
    try:
        async with open_events(client, _events_path(sid)) as events:
            turn_id = await start_turn(client, sid, "hold on", "req-resume")
            seen = await events.take(2)
        assert _sequences(seen) == [1, 2]
        await _held_request(live.fake, requests + 1)  # context_updated (3) was emitted before
        async with open_events(client, _events_path(sid), last_event_id=2) as events:
            replayed = await events.next()
            gate.release()
            rest = [replayed, *await events.until(_finished(turn_id))]
    finally:
        gate.release()
    assert (replayed.sequence, replayed.type) == (3, "context_updated")
    assert _sequences(rest) == list(range(3, len(rest) + 3))
    assert all(e.id == str(e.sequence) and not e.is_resync for e in rest)
    assert "".join(e.update["delta"] for e in rest if e.type == "text_delta") == (
        "After the reconnect."
    )
    last = rest[-1].sequence

    for cursor in (0, 4, last - 1):
        async with open_events(client, _events_path(sid), after_sequence=cursor) as events:
            replayed_again = await events.until(_reached(last))
        assert _sequences(replayed_again) == list(range(cursor + 1, last + 1)), cursor
    # A browser's EventSource reconnects to the same URL adding Last-Event-ID: the header wins.
    async with open_events(client, _events_path(sid), last_event_id=5, after_sequence=1) as events:
        assert _sequences(await events.until(_reached(last))) == list(range(6, last + 1))

    live.fake.push(Reply(text="next"))
    async with open_events(client, _events_path(sid), after_sequence=last - 2) as events:
        tail = await events.until(_reached(last))
        next_turn, following = await _observed_turn(client, events, sid, "req-next")
    assert _sequences([*tail, *following]) == list(range(last - 1, following[-1].sequence + 1))
    assert following[0].turn_id == next_turn


# -- DESIGN.md §2 "SSE": no cursor ----------------------------------------------------------
async def test_a_connection_without_a_cursor_gets_live_updates_only(
    live: Live, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """DESIGN.md §2 "SSE" (daemon-api.md §2): without Last-Event-ID / after_sequence nothing of the
    ring buffer is replayed; the first event is the next update."""
    sid = await _session(client, tmp_path)
    _, first_turn = await _completed_turn(client, live.fake, sid, "req-1")
    last = first_turn[-1].sequence
    assert (await _snapshot(client, sid))["lastUpdateSequence"] == last
    live.fake.push(Reply(text="again"))
    async with open_events(client, _events_path(sid)) as events:
        turn_id = await start_turn(client, sid, "go", "req-2")
        first = await events.next()
        rest = await events.until(_finished(turn_id))
    assert (first.sequence, first.type, first.turn_id) == (last + 1, "turn_started", turn_id)
    assert _sequences([first, *rest]) == list(range(last + 1, rest[-1].sequence + 1))


# -- DESIGN.md §2 "SSE": resync -------------------------------------------------------------
async def test_a_cursor_ahead_of_the_current_sequence_gets_resync_first_then_live_updates(
    live: Live, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """DESIGN.md §2 "SSE": sequences restart with the process, so a cursor ahead of the session's
    current sequence (even on a session without updates) gets `resync` first, then live updates;
    a cursor at the current sequence does not."""
    sid = await _session(client, tmp_path)
    async with open_events(client, _events_path(sid), last_event_id=7) as events:
        resync = await events.next()
        _, updates = await _completed_turn_on(client, live.fake, events, sid, "req-1")
    _assert_resync(resync, sid, current=0)
    last = updates[-1].sequence
    assert _sequences(updates) == list(range(1, last + 1))

    async with open_events(client, _events_path(sid), after_sequence=last + 1) as events:
        resync = await events.next()
        _, updates = await _completed_turn_on(client, live.fake, events, sid, "req-2")
    _assert_resync(resync, sid, current=last)
    assert updates[0].sequence == last + 1
    last = updates[-1].sequence

    async with open_events(client, _events_path(sid), last_event_id=last) as events:
        _, updates = await _completed_turn_on(client, live.fake, events, sid, "req-3")
    assert not any(e.is_resync for e in updates)
    assert updates[0].sequence == last + 1


async def test_a_cursor_that_left_the_512_entry_ring_buffer_gets_resync_first(
    live: Live, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """daemon-api.md §2, session-runtime.md §7: the ring holds the latest 512 updates; a cursor
    whose next update is still buffered replays without `resync`, one update older gets `resync`
    first (read the snapshot; its `id:` the current sequence), then only newer updates (the
    buffered ones are in the snapshot)."""
    sid = await _session(client, tmp_path)
    text = "abcdefghij" * 60
    live.fake.push(Reply(text=text, chunk_chars=1))
    async with open_events(client, _events_path(sid)) as events:
        turn_id = await start_turn(client, sid, "talk a lot", "req-long")
        await events.until(_finished(turn_id), timeout=60)
    snapshot = await _snapshot(client, sid)
    last = snapshot["lastUpdateSequence"]
    assert last > RING + 60
    assert snapshot["runtime"]["outcome"] == {"status": "completed", "finalText": text}

    async with open_events(client, _events_path(sid), last_event_id=last - RING) as events:
        kept = await events.until(_reached(last))
    assert _sequences(kept) == list(range(last - RING + 1, last + 1))
    assert not any(e.is_resync for e in kept)

    for n, (header, query) in enumerate(((last - RING - 1, None), (None, 1), (0, None))):
        async with open_events(
            client, _events_path(sid), last_event_id=header, after_sequence=query
        ) as events:
            resync = await events.next()
            _, after = await _completed_turn_on(client, live.fake, events, sid, f"req-{n}")
        _assert_resync(resync, sid, current=last)
        assert after[0].sequence == last + 1, "then only updates newer than the snapshot's"
        last = after[-1].sequence


# -- §8: the snapshot -----------------------------------------------------------------------
async def test_the_session_snapshot_is_idle_then_running_then_terminal(
    live: Live, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """daemon-api.md §2 (`GET /v1/sessions/{sid}` with its `snapshot`), session-runtime.md §8:
    idle before any turn; running with its phase while the provider holds the answer (the fake
    cannot hold mid-stream, so the draft is still empty); terminal with the outcome after it;
    `lastUpdateSequence` is the last update a client saw."""
    sid = await _session(client, tmp_path)
    body = await _session_body(client, sid)
    assert body["session_id"] == sid
    assert body["permission_mode"] == "auto"
    idle = body["snapshot"]
    sandbox = idle.pop("sandbox")
    assert idle == {
        "version": 7,
        "sessionId": sid,
        "lastUpdateSequence": 0,
        "permissionMode": "auto",
        "runtime": {"state": "idle"},
    }
    assert sandbox["state"] in ("available", "unavailable")
    if sandbox["state"] == "unavailable":
        assert isinstance(sandbox["reason"], str)

    requests = len(live.fake.requests)
    gate = Gate()
    live.fake.push(Held(Reply(text="Finally."), gate))
    try:
        async with open_events(client, _events_path(sid)) as events:
            turn_id = await start_turn(client, sid, "take your time", "req-snap")
            seen = await events.until(lambda e: e.type == "context_updated")
            await _held_request(live.fake, requests + 1)
            running = await _snapshot(client, sid)
            gate.release()
            seen += await events.until(_finished(turn_id))
    finally:
        gate.release()
    assert running["lastUpdateSequence"] == 3 == seen[2].sequence
    assert running["sandbox"] == sandbox
    runtime = running["runtime"]
    assert {k: runtime[k] for k in ("state", "turnId", "clientRequestId", "phase")} == {
        "state": "running",
        "turnId": turn_id,
        "clientRequestId": "req-snap",
        "phase": "running_model",
    }
    assert (runtime["draftText"], runtime["draftReasoning"], runtime["toolCalls"]) == ("", "", [])
    assert runtime.get("pendingPermission") is None

    terminal = await _snapshot(client, sid)
    assert terminal["lastUpdateSequence"] == seen[-1].sequence
    assert {k: v for k, v in terminal["runtime"].items() if v is not None} == {
        "state": "terminal",
        "turnId": turn_id,
        "clientRequestId": "req-snap",
        "outcome": {"status": "completed", "finalText": "Finally."},
    }


# -- §2: the global stream ------------------------------------------------------------------
async def test_the_global_event_stream_carries_the_updates_of_every_session(
    live: Live, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """daemon-api.md §2 `GET /v1/events`, session-runtime.md §7 (the Core-wide broadcast): the
    updates of two sessions arrive on one stream, each envelope with its own sessionId and each
    session's sequences gapless from 1."""
    first = await _session(client, tmp_path, "one")
    second = await _session(client, tmp_path, "two")
    live.fake.push(Reply(text="same answer"), Reply(text="same answer"))
    async with open_events(client, "/v1/events") as events:
        turns = {
            first: await start_turn(client, first, "one", "req-a"),
            second: await start_turn(client, second, "two", "req-b"),
        }
        unfinished = set(turns.values())
        seen: list[SseEvent] = []

        def last_one(event: SseEvent) -> bool:
            seen.append(event)
            if not event.is_resync and event.type == "turn_finished":
                unfinished.discard(event.turn_id or "")
            return not unfinished

        await events.until(last_one)
    assert not any(e.is_resync for e in seen)
    mine = [e for e in seen if e.data["sessionId"] in turns]
    for sid, turn_id in turns.items():
        of_session = [e for e in mine if e.data["sessionId"] == sid]
        assert _sequences(of_session) == list(range(1, len(of_session) + 1))
        assert {e.turn_id for e in of_session} == {turn_id}
        assert of_session[0].type == "turn_started"
        assert of_session[-1].update["outcome"] == {
            "status": "completed",
            "finalText": "same answer",
        }
        assert all(e.data["version"] == 7 and set(e.data) == ENVELOPE_KEYS for e in of_session)


async def test_deleting_a_session_ends_its_stream_with_a_typed_stream_ended_then_closes_it(
    live: Live, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Issue 25 point 5: the stream of a deleted session gets a last update ``stream_ended``
    (reason ``deleted``, the next sequence, ``id:`` as always) and then ends; the global stream
    carries the same update and stays open."""
    sid = await _session(client, tmp_path)
    _, updates = await _completed_turn(client, live.fake, sid, "req-1")
    async with (
        open_events(client, _events_path(sid)) as events,
        open_events(client, "/v1/events") as everything,
    ):
        deleted = await client.delete(f"/v1/sessions/{sid}")
        assert deleted.status_code == 204, deleted.text
        ended = await events.next()
        assert ended.update == {"type": "stream_ended", "reason": "deleted"}
        assert ended.sequence == updates[-1].sequence + 1 and ended.id == str(ended.sequence)
        assert set(ended.data) == ENVELOPE_KEYS and ended.turn_id is None
        with pytest.raises(EOFError):
            await events.next()
        broadcast = await everything.until(lambda e: e.data.get("sessionId") == sid)
        assert broadcast[-1].data == ended.data
    assert (await client.get(_events_path(sid))).status_code == 404


# -- §2: permission mode --------------------------------------------------------------------
async def test_switching_to_accept_edits_shows_in_the_session_and_snapshot_and_the_next_request(
    live: Live, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """daemon-api.md §2 `PUT …/permission-mode`, session-runtime.md §8 (`permissionMode`),
    permissions-sandbox.md §3: the session and its snapshot show `accept_edits`; the next model
    request carries a new `<sandbox_policy>` World State message with `mode: accept-edits`."""
    sid = await _session(client, tmp_path)
    await _completed_turn(client, live.fake, sid, "req-before")
    before = live.fake.bodies[-1]
    policies_before = [t for t in chat_user_texts(before) if SANDBOX_POLICY_TAG in t]
    assert len(policies_before) == 1
    assert "mode: auto" in policies_before[0]

    response = await client.put(
        f"/v1/sessions/{sid}/permission-mode", json={"mode": "accept-edits"}
    )
    assert response.status_code == 200, response.text
    assert (response.json()["session_id"], response.json()["permission_mode"]) == (
        sid,
        "accept_edits",
    )
    body = await _session_body(client, sid)
    assert body["permission_mode"] == "accept_edits"
    assert body["snapshot"]["permissionMode"] == "accept_edits"
    invalid = await client.put(f"/v1/sessions/{sid}/permission-mode", json={"mode": "yolo"})
    assert _error(invalid) == (422, "invalid_request")
    assert (await _snapshot(client, sid))["permissionMode"] == "accept_edits"

    await _completed_turn(client, live.fake, sid, "req-after")
    after = live.fake.bodies[-1]
    texts = chat_user_texts(after)
    assert texts[: len(chat_user_texts(before))] == chat_user_texts(before)
    new_policies = [t for t in texts[len(chat_user_texts(before)) :] if SANDBOX_POLICY_TAG in t]
    assert len(new_policies) == 1
    assert "mode: accept-edits" in new_policies[0]


# -- §2: cancel, busy, idempotent start -----------------------------------------------------
async def test_cancelling_a_held_turn_ends_it_cancelled_and_a_second_cancel_is_turn_not_active(
    live: Live, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """daemon-api.md §2 `POST …/cancel` → 202, then 409 `turn_not_active`; session-runtime.md §7,
    §8: turn_finished carries outcome `cancelled`, the snapshot is terminal, and the session takes
    its next turn."""
    sid = await _session(client, tmp_path)
    requests = len(live.fake.requests)
    gate = Gate()
    live.fake.push(Held(Reply(text="never delivered"), gate))
    try:
        async with open_events(client, _events_path(sid)) as events:
            turn_id = await start_turn(client, sid, "wait for it", "req-cancel")
            await _held_request(live.fake, requests + 1)
            cancel = await client.post(f"/v1/sessions/{sid}/turns/{turn_id}/cancel")
            assert cancel.status_code == 202, cancel.text
            updates = await events.until(_finished(turn_id))
    finally:
        gate.release()
    assert updates[-1].update["outcome"]["status"] == "cancelled"
    assert not any(e.type == "text_delta" for e in updates)
    turn = (await client.get(f"/v1/sessions/{sid}/turns/{turn_id}")).json()
    assert turn["status"] == "cancelled"
    runtime = (await _snapshot(client, sid))["runtime"]
    assert (runtime["state"], runtime["outcome"]["status"]) == ("terminal", "cancelled")

    again = await client.post(f"/v1/sessions/{sid}/turns/{turn_id}/cancel")
    assert _error(again) == (409, "turn_not_active")
    unknown = await client.post(f"/v1/sessions/{sid}/turns/turn_unknown/cancel")
    assert _error(unknown) == (404, "not_found")

    next_turn, _ = await _completed_turn(client, live.fake, sid, "req-after-cancel")
    assert (await client.get(f"/v1/sessions/{sid}/turns/{next_turn}")).json()["status"] == (
        "completed"
    )


async def test_a_second_turn_while_one_runs_is_busy_and_the_same_client_request_id_is_the_same_turn(
    live: Live, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """daemon-api.md §2 `POST …/turns`: another turn while one runs → 409 `busy` with the running
    `turn_id`; the same `client_request_id` again → 202 with the same `turn_id` (no new turn)."""
    sid = await _session(client, tmp_path)
    requests = len(live.fake.requests)
    gate = Gate()
    live.fake.push(Held(Reply(text="only once"), gate))
    try:
        async with open_events(client, _events_path(sid)) as events:
            turn_id = await start_turn(client, sid, "first", "req-same")
            await _held_request(live.fake, requests + 1)
            busy = await client.post(
                f"/v1/sessions/{sid}/turns",
                json={"client_request_id": "req-other", "input": [{"type": "text", "text": "x"}]},
            )
            assert _error(busy) == (409, "busy")
            assert busy.json()["error"]["turn_id"] == turn_id
            assert await start_turn(client, sid, "first", "req-same") == turn_id
            gate.release()
            updates = await events.until(_finished(turn_id))
    finally:
        gate.release()
    assert [e.type for e in updates].count("turn_started") == 1
    assert await start_turn(client, sid, "first", "req-same") == turn_id
    assert len(live.fake.requests) == requests + 1
    assert (await _snapshot(client, sid))["lastUpdateSequence"] == updates[-1].sequence


# -- preamble: the OpenAPI document-----------------------------------------------------------
DOCUMENTED_PATHS = {
    "/v1/health": {"get"},
    "/v1/providers": {"get"},
    "/v1/providers/{provider_id}": {"put"},
    "/v1/sessions": {"get", "post"},
    "/v1/sessions/{sid}": {"get"},
    "/v1/sessions/{sid}/turns": {"post"},
    "/v1/sessions/{sid}/turns/{tid}": {"get"},
    "/v1/sessions/{sid}/turns/{tid}/cancel": {"post"},
    "/v1/sessions/{sid}/turns/{tid}/permissions/{tool_call_id}": {"post"},
    "/v1/sessions/{sid}/permission-mode": {"put"},
    "/v1/sessions/{sid}/compact": {"post"},
    "/v1/sessions/{sid}/rewind": {"post"},
    "/v1/sessions/{sid}/messages": {"get"},
    "/v1/sessions/{sid}/context": {"get"},
    "/v1/sessions/{sid}/events": {"get"},
    "/v1/events": {"get"},
}


async def test_the_openapi_document_lists_the_documented_paths(
    client: httpx.AsyncClient,
) -> None:
    """daemon-api.md (preamble and §2): `GET /v1/openapi.json` describes every route of the
    contract with its methods, generated from the pydantic models that validate requests."""
    response = await client.get("/v1/openapi.json")
    assert response.status_code == 200, response.text
    document = response.json()
    assert document["openapi"].startswith("3.")
    paths = {path: set(item) for path, item in document["paths"].items()}
    missing = {
        f"{method.upper()} {path}"
        for path, methods in DOCUMENTED_PATHS.items()
        for method in methods - paths.get(path, set())
    }
    assert missing == set()
    start_turn_body = document["components"]["schemas"]["StartTurnBody"]
    assert {"client_request_id", "input"} <= set(start_turn_body["required"])
    request = document["paths"]["/v1/sessions/{sid}/turns"]["post"]["requestBody"]
    assert request["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/StartTurnBody"
    }
