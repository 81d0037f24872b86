"""The session verbs a desktop app needs (issue 26), through ``openwork serve`` and the scripted
provider on loopback: steer a running turn, switch the model, fork, revert. Each test checks what
the provider was sent (the request is the truth of what the model saw)."""

from __future__ import annotations

import signal
from collections.abc import Callable, Mapping
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import Scripted, provider_env
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Gate, Held, Reply, ToolCallSpec
from tests.support.daemon import run_turn_and_wait, start_daemon, start_turn
from tests.support.postgres import PgCluster
from tests.support.sse import SseEvent, open_events

pytestmark = pytest.mark.asyncio(loop_scope="module")


def made(folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    return folder


async def session(client: httpx.AsyncClient, workspace: Path, **body: object) -> str:
    created = await client.post("/v1/sessions", json={"workspace": str(workspace), **body})
    assert created.status_code == 201, created.text
    sid = created.json()["session_id"]
    assert isinstance(sid, str)
    return sid


def text_of(message: Mapping[str, object]) -> str:
    """A Chat Completions message's text, whether its content is a string or parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def messages_of(body: Mapping[str, object]) -> list[Mapping[str, object]]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return messages


def user_texts(body: Mapping[str, object]) -> list[str]:
    return [text_of(m) for m in messages_of(body) if m.get("role") == "user"]


async def steer(
    client: httpx.AsyncClient, sid: str, tid: str, text: str, request_id: str
) -> httpx.Response:
    return await client.post(
        f"/v1/sessions/{sid}/turns/{tid}/steer",
        json={"client_request_id": request_id, "input": [{"type": "text", "text": text}]},
    )


def finished(turn_id: str) -> Callable[[SseEvent], bool]:
    return lambda e: not e.is_resync and e.turn_id == turn_id and e.type == "turn_finished"


def _ended(events: list[SseEvent]) -> Mapping[str, object]:
    outcome = events[-1].update["outcome"]
    assert isinstance(outcome, dict)
    return outcome


# -- 1. steer ---------------------------------------------------------------------------------
async def test_a_steer_during_a_tool_call_reaches_the_next_request_after_the_tool_result(
    scripted: Scripted, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Issue 26 point 1: a steer sent while a tool call waits on its approval is committed and
    announced at once (202, ``turn_steered``), and the next request carries it as the user's
    message after the tool's result (the call/result pair intact); a retry with the same
    client request id answers the same ids and adds nothing; the transcript shows it as the
    user's message of that turn."""
    fake = scripted.fake
    workspace = made(tmp_path / "ws")
    sid = await session(client, workspace, permission_mode="accept-edits")
    escalated = {
        "command": "echo ok > report.txt",
        "sandboxPermissions": {
            "paths": [{"path": str(workspace.resolve()), "access": "write", "scope": "subtree"}]
        },
        "justification": "The build writes its report into the workspace.",
    }
    before = len(fake.requests)
    fake.push(Reply(tool_calls=(ToolCallSpec("call_1", "bash", escalated),)), Reply(text="done"))
    async with open_events(client, f"/v1/sessions/{sid}/events") as events:
        tid = await start_turn(client, sid, "build it", "turn-steer-tool")
        asked = await events.until(lambda e: e.type == "permission_requested")
        first = await steer(client, sid, tid, "and also run the tests", "steer-tool-1")
        assert first.status_code == 202, first.text
        ids = first.json()
        assert ids["turn_id"] == tid and ids["steer_id"].startswith("steer_")
        again = await steer(client, sid, tid, "and also run the tests", "steer-tool-1")
        assert (again.status_code, again.json()) == (202, ids)
        announced = await events.until(lambda e: e.type == "turn_steered")
        assert announced[-1].update["steerId"] == ids["steer_id"]
        assert announced[-1].update["text"] == "and also run the tests"
        call_id = asked[-1].update["request"]["toolCallId"]
        decided = await client.post(
            f"/v1/sessions/{sid}/turns/{tid}/permissions/{call_id}",
            json={"decision": "allow_once"},
        )
        assert decided.status_code == 202, decided.text
        ended = await events.until(finished(tid))
    assert _ended(ended)["status"] == "completed"
    second = messages_of(fake.requests[before + 1].body)
    result = next(i for i, m in enumerate(second) if m.get("role") == "tool")
    assert second[result]["tool_call_id"] == "call_1"
    assert second[result - 1]["role"] == "assistant" and second[result - 1]["tool_calls"]
    steered_at = next(i for i, m in enumerate(second) if text_of(m) == "and also run the tests")
    assert steered_at > result and second[steered_at]["role"] == "user"
    assert user_texts(fake.requests[before + 1].body).count("and also run the tests") == 1
    retried = await steer(client, sid, tid, "and also run the tests", "steer-tool-1")
    assert (retried.status_code, retried.json()) == (202, ids)  # idempotent after the end too
    page = (await client.get(f"/v1/sessions/{sid}/messages")).json()["messages"]
    said = [
        (m["content"][0]["text"], m["sequence"])
        for m in page
        if m["role"] == "user" and m["kind"] == "normal" and m["turn_id"] == tid
    ]
    tool_row = next(m["sequence"] for m in page if m["role"] == "tool")
    assert [text for text, _ in said] == ["build it", "and also run the tests"]
    assert said[1][1] > tool_row  # stored after the result, as it was sent


async def test_a_steer_while_the_final_answer_is_pending_makes_one_more_model_call(
    scripted: Scripted, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Issue 26 point 1: a steer that arrives while the provider has not finished what turns out
    to be the final answer keeps the turn going: exactly one more call, which carries the first
    answer and then the steer; the turn's final text is the second answer."""
    fake = scripted.fake
    sid = await session(client, made(tmp_path / "ws"))
    before = len(fake.requests)
    gate = Gate()
    fake.push(Held(Reply(text="first answer"), gate), Reply(text="second answer"))
    async with open_events(client, f"/v1/sessions/{sid}/events") as events:
        tid = await start_turn(client, sid, "write a poem", "turn-steer-final")
        await fake.wait_for_requests(before + 1, timeout=30)
        accepted = await steer(client, sid, tid, "make it rhyme", "steer-final-1")
        assert accepted.status_code == 202, accepted.text
        await events.until(lambda e: e.type == "turn_steered")
        gate.release()
        ended = await events.until(finished(tid))
    assert _ended(ended) == {"status": "completed", "finalText": "second answer"}
    assert len(fake.requests) == before + 2
    last = messages_of(fake.requests[before + 1].body)
    assert [m["role"] for m in last[-2:]] == ["assistant", "user"]
    assert text_of(last[-2]) == "first answer"
    assert text_of(last[-1]) == "make it rhyme"


async def test_a_cancelled_turn_keeps_its_committed_steer(
    scripted: Scripted, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Issue 26 point 1: cancel discards nothing already committed — a steer accepted while the
    model call was pending is in the Conversation after the cancel, and the next turn's request
    carries it."""
    fake = scripted.fake
    sid = await session(client, made(tmp_path / "ws"))
    before = len(fake.requests)
    gate = Gate()
    fake.push(Held(Reply(text="never sent"), gate))
    async with open_events(client, f"/v1/sessions/{sid}/events") as events:
        tid = await start_turn(client, sid, "start something", "turn-steer-cancel")
        await fake.wait_for_requests(before + 1, timeout=30)
        accepted = await steer(client, sid, tid, "keep this in mind", "steer-cancel-1")
        assert accepted.status_code == 202, accepted.text
        assert (await client.post(f"/v1/sessions/{sid}/turns/{tid}/cancel")).status_code == 202
        ended = await events.until(finished(tid))
    gate.release()
    assert _ended(ended)["status"] == "cancelled"
    fake.push(Reply(text="noted"))
    await run_turn_and_wait(client, sid, "go on", "turn-after-cancel")
    assert user_texts(fake.requests[-1].body)[-2:] == ["keep this in mind", "go on"]


async def test_a_steer_after_the_turn_ended_is_refused_turn_not_active(
    scripted: Scripted, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Issue 26 point 1: a turn that is not running answers 409 ``turn_not_active`` (its
    message says which turn runs, here none); an unknown turn is 404."""
    fake = scripted.fake
    sid = await session(client, made(tmp_path / "ws"))
    fake.push(Reply(text="done"))
    tid, _ = await run_turn_and_wait(client, sid, "hello", "turn-steer-late")
    late = await steer(client, sid, tid, "one more thing", "steer-late-1")
    assert late.status_code == 409, late.text
    error = late.json()["error"]
    assert error["code"] == "turn_not_active"
    assert "no turn is running" in error["message"]
    unknown = await steer(client, sid, "turn_0000", "x", "steer-late-2")
    assert unknown.status_code == 404, unknown.text
    page = (await client.get(f"/v1/sessions/{sid}/messages")).json()["messages"]
    assert "one more thing" not in str(page)  # nothing was committed for the refused steer


# -- 4. model switch --------------------------------------------------------------------------
async def _switchable_provider(client: httpx.AsyncClient, fake: FakeProvider) -> None:
    put = await client.put(
        "/v1/providers/switchable",
        json={
            "kind": "openai-chat",
            "base_url": fake.openai_base_url,
            "models": [
                {"name": "small-model", "context_window": 32_768, "max_output_tokens": 4_096},
                {"name": "big-model", "context_window": 200_000, "max_output_tokens": 32_000},
            ],
            "settings": {"probe_served_window": False},
        },
    )
    assert put.status_code == 200, put.text


def _threshold(limits: Mapping[str, int]) -> int:
    """The compaction line of an inspection's ``limits`` (model-providers.md)."""
    return min(limits["auto_compact_token_limit"], limits["effective_input_tokens"])


async def test_a_model_switch_during_a_turn_is_in_that_turns_next_model_call(
    scripted: Scripted, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Issue 26 point 4, "effective from the next model call": a ``PATCH`` while the turn's first
    model call is in flight leaves that call alone and the same turn's next request carries the
    new ``model``, after the tool result (pairing intact); that call's compaction line is the
    new model's (its ``context_updated`` percentage); the session's usage names the model of its
    last call and the turn's ``model`` is the one of its latest call."""
    fake = scripted.fake
    await _switchable_provider(client, fake)
    sid = await session(client, made(tmp_path / "ws"), provider="switchable", model="small-model")
    small = (await client.get(f"/v1/sessions/{sid}/context")).json()["limits"]
    before = len(fake.requests)
    gate = Gate()
    listing = Reply(tool_calls=(ToolCallSpec("call_s", "list", {"path": "."}),))
    fake.push(Held(listing, gate), Reply(text="big finished"))
    async with open_events(client, f"/v1/sessions/{sid}/events") as events:
        tid = await start_turn(client, sid, "look around", "turn-switch-mid")
        await fake.wait_for_requests(before + 1, timeout=30)
        switched = await client.patch(f"/v1/sessions/{sid}", json={"model": "big-model"})
        assert switched.status_code == 200, switched.text
        big = (await client.get(f"/v1/sessions/{sid}/context")).json()["limits"]
        gate.release()
        ended = await events.until(finished(tid))
    assert _ended(ended) == {"status": "completed", "finalText": "big finished"}
    assert [r.body["model"] for r in fake.requests[before:]] == ["small-model", "big-model"]
    second = messages_of(fake.requests[before + 1].body)
    assert [m["role"] for m in second[-2:]] == ["assistant", "tool"]
    assert second[-1]["tool_call_id"] == "call_s"
    budgets = [e.update for e in ended if e.type == "context_updated"]
    assert len(budgets) == 2
    for budget, limits in zip(budgets, (small, big), strict=True):
        used = budget["estimatedInputTokens"] + budget["reservedOutputTokens"]
        expected = 100.0 * used / _threshold(limits)
        assert budget["autoCompactPercent"] == pytest.approx(expected)
    assert _threshold(small) != _threshold(big)
    overview = (await client.get(f"/v1/sessions/{sid}/context/overview")).json()
    usage = overview["usage"]
    assert (usage["model_calls"], usage["last_call"]["model_name"]) == (2, "big-model")
    turn = (await client.get(f"/v1/sessions/{sid}/turns/{tid}")).json()
    assert turn["model"] == {"provider_id": "switchable", "name": "big-model"}
    assert turn["model_calls"] == 2


async def test_a_model_switch_is_in_the_next_request_the_inspection_and_the_turn(
    scripted: Scripted, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Issue 26 point 4: ``PATCH`` with ``model`` (validated as at create: 400
    ``model_not_found`` / ``provider_not_found``, nothing changed) is the next request's
    ``model``; the inspection's limits are the new model's, the turn names the model it ran
    with; a turn body's ``model`` is for that turn only."""
    fake = scripted.fake
    await _switchable_provider(client, fake)
    sid = await session(client, made(tmp_path / "ws"), provider="switchable", model="small-model")
    fake.push(
        Reply(text="small says hi"),
        Reply(text="big says hi"),
        Reply(text="small again"),
        Reply(text="big again"),
    )
    await run_turn_and_wait(client, sid, "hello", "turn-switch-1")
    assert fake.requests[-1].body["model"] == "small-model"
    for refused, code in (
        ({"model": "no-such-model"}, "model_not_found"),
        ({"provider": "no-such-provider"}, "provider_not_found"),
    ):
        answer = await client.patch(f"/v1/sessions/{sid}", json=refused)
        assert (answer.status_code, answer.json()["error"]["code"]) == (400, code), answer.text
    context = (await client.get(f"/v1/sessions/{sid}/context")).json()
    assert context["limits"]["context_window"] == 32_768  # the refusals changed nothing
    switched = await client.patch(f"/v1/sessions/{sid}", json={"model": "big-model"})
    assert switched.status_code == 200, switched.text
    context = (await client.get(f"/v1/sessions/{sid}/context")).json()
    assert context["limits"]["context_window"] == 200_000
    big, _ = await run_turn_and_wait(client, sid, "and now?", "turn-switch-2")
    assert fake.requests[-1].body["model"] == "big-model"
    turn = (await client.get(f"/v1/sessions/{sid}/turns/{big}")).json()
    assert turn["model"] == {"provider_id": "switchable", "name": "big-model"}
    async with open_events(client, f"/v1/sessions/{sid}/events") as events:
        once = await client.post(
            f"/v1/sessions/{sid}/turns",
            json={
                "client_request_id": "turn-switch-3",
                "input": [{"type": "text", "text": "quick one"}],
                "model": "small-model",
            },
        )
        assert once.status_code == 202, once.text
        await events.until(finished(once.json()["turn_id"]))
    assert fake.requests[-1].body["model"] == "small-model"
    await run_turn_and_wait(client, sid, "back to big", "turn-switch-4")
    assert fake.requests[-1].body["model"] == "big-model"
    bad = await client.post(
        f"/v1/sessions/{sid}/turns",
        json={
            "client_request_id": "turn-switch-5",
            "input": [{"type": "text", "text": "x"}],
            "model": "no-such-model",
        },
    )
    assert (bad.status_code, bad.json()["error"]["code"]) == (400, "model_not_found")


# -- 2. fork ----------------------------------------------------------------------------------
def _before_user_text(body: Mapping[str, object], text: str) -> list[Mapping[str, object]]:
    """A request's messages before the user message ``text`` (the history it carried)."""
    messages = messages_of(body)
    at = next(i for i, m in enumerate(messages) if m.get("role") == "user" and text_of(m) == text)
    return messages[:at]


async def test_a_fork_after_the_first_of_two_turns_sends_turn_one_as_the_source_did(
    scripted: Scripted, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Issue 26 point 2: the fork of a two-turn session after the first turn is a new root
    session (same workspace, provider, model, mode; "Fork of …") whose first request carries
    turn 1's history exactly as the source's turn-2 request did, and nothing of turn 2; the
    source is unchanged; a cut that is not a turn boundary, or out of range, is 400
    ``invalid_fork_point``; without ``after_sequence`` the fork copies every finished turn."""
    fake = scripted.fake
    workspace = made(tmp_path / "ws")
    sid = await session(client, workspace, permission_mode="accept-edits")
    fake.push(
        Reply(tool_calls=(ToolCallSpec("call_r", "list", {"path": "."}),)),
        Reply(text="first answer"),
        Reply(text="second answer"),
        Reply(text="fork answer"),
    )
    first, _ = await run_turn_and_wait(client, sid, "first question", "turn-fork-1")
    await run_turn_and_wait(client, sid, "second question", "turn-fork-2")
    source_turn_two = fake.requests[-1].body
    page = (await client.get(f"/v1/sessions/{sid}/messages")).json()["messages"]
    end_of_first = max(m["sequence"] for m in page if m["turn_id"] == first)
    for bad in (end_of_first - 1, page[-1]["sequence"] + 5):
        refused = await client.post(f"/v1/sessions/{sid}/fork", json={"after_sequence": bad})
        assert (refused.status_code, refused.json()["error"]["code"]) == (
            400,
            "invalid_fork_point",
        ), refused.text
    forked = await client.post(f"/v1/sessions/{sid}/fork", json={"after_sequence": end_of_first})
    assert forked.status_code == 201, forked.text
    fork = forked.json()
    source = (await client.get(f"/v1/sessions/{sid}")).json()
    assert fork["session_id"] != sid
    for field in ("workspace", "agent", "provider", "model", "permission_mode"):
        assert fork[field] == source[field], field
    summary = (await client.get(f"/v1/sessions/{fork['session_id']}")).json()
    assert summary["title"] == "Fork of first question"
    assert summary["parent_session_id"] is None
    await run_turn_and_wait(client, fork["session_id"], "fork question", "turn-fork-3")
    fork_request = fake.requests[-1].body
    carried = _before_user_text(fork_request, "fork question")
    assert carried == _before_user_text(source_turn_two, "second question")
    assert "second" not in str(carried) and "first answer" in str(carried)
    assert (await client.get(f"/v1/sessions/{sid}/messages")).json()["messages"] == page
    whole = await client.post(f"/v1/sessions/{sid}/fork", json={})
    assert whole.status_code == 201, whole.text
    copied = await client.get(f"/v1/sessions/{whole.json()['session_id']}/messages")
    assert [(m["sequence"], m["role"], m["content"]) for m in copied.json()["messages"]] == [
        (m["sequence"], m["role"], m["content"]) for m in page
    ]


# -- 3. revert --------------------------------------------------------------------------------
async def test_a_reverted_turn_leaves_the_conversation_and_its_file_and_unrevert_puts_it_back(
    scripted: Scripted, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Issue 26 point 3: reverting the turn that wrote a file restores the file, marks the turn
    ``reverted`` (kept in storage), and the next request and the inspection are without it;
    unrevert puts both back while no turn has started since, and is 409
    ``unrevert_unavailable`` once one has."""
    fake = scripted.fake
    workspace = made(tmp_path / "ws")
    notes = workspace / "notes.txt"
    notes.write_text("original\n")
    sid = await session(client, workspace)
    fake.push(
        Reply(text="first answer"),
        Reply(tool_calls=(ToolCallSpec("call_read", "read", {"path": "notes.txt"}),)),
        Reply(
            tool_calls=(
                ToolCallSpec("call_write", "write", {"path": "notes.txt", "content": "changed\n"}),
            )
        ),
        Reply(text="rewrote the notes"),
        Reply(text="third answer"),
    )
    first, _ = await run_turn_and_wait(client, sid, "first question", "turn-revert-1")
    second, _ = await run_turn_and_wait(client, sid, "change the notes", "turn-revert-2")
    assert notes.read_text() == "changed\n"

    reverted = await client.post(f"/v1/sessions/{sid}/turns/{second}/revert")
    assert reverted.status_code == 200, reverted.text
    body = reverted.json()
    assert body["turn_ids"] == [second] and body["conflicts"] == []
    assert [(c["path"], c["undone"]) for c in body["changes"]] == [("notes.txt", True)]
    assert notes.read_text() == "original\n"
    turns = (await client.get(f"/v1/sessions/{sid}/turns")).json()["turns"]
    assert {t["turn_id"]: t["reverted"] for t in turns} == {first: False, second: True}
    inspection = (await client.get(f"/v1/sessions/{sid}/context")).json()
    assert "change the notes" not in str(inspection) and "first answer" in str(inspection)
    again = await client.post(f"/v1/sessions/{sid}/turns/{second}/revert")
    assert (again.status_code, again.json()["error"]["code"]) == (409, "turn_already_reverted")

    back = await client.post(f"/v1/sessions/{sid}/unrevert")
    assert back.status_code == 200, back.text
    assert back.json()["turn_ids"] == [second]
    assert notes.read_text() == "changed\n"
    inspection = (await client.get(f"/v1/sessions/{sid}/context")).json()
    assert "change the notes" in str(inspection)

    assert (await client.post(f"/v1/sessions/{sid}/turns/{second}/revert")).status_code == 200
    assert notes.read_text() == "original\n"
    await run_turn_and_wait(client, sid, "third question", "turn-revert-3")
    sent = str(fake.requests[-1].body)
    assert "first answer" in sent
    assert "change the notes" not in sent and "rewrote the notes" not in sent
    late = await client.post(f"/v1/sessions/{sid}/unrevert")
    assert (late.status_code, late.json()["error"]["code"]) == (409, "unrevert_unavailable")
    assert notes.read_text() == "original\n"


async def test_a_revert_while_a_turn_runs_is_refused_session_active(
    scripted: Scripted, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Issue 26 point 3: revert and unrevert are user actions on the Conversation, refused 409
    ``session_active`` while a turn runs; an unknown turn is 404."""
    fake = scripted.fake
    sid = await session(client, made(tmp_path / "ws"))
    fake.push(Reply(text="done"))
    first, _ = await run_turn_and_wait(client, sid, "hello", "turn-busy-1")
    gate = Gate()
    fake.push(Held(Reply(text="later"), gate))
    before = len(fake.requests)
    async with open_events(client, f"/v1/sessions/{sid}/events") as events:
        running = await start_turn(client, sid, "long one", "turn-busy-2")
        await fake.wait_for_requests(before + 1, timeout=30)
        for path in (f"turns/{first}/revert", "unrevert"):
            refused = await client.post(f"/v1/sessions/{sid}/{path}")
            assert (refused.status_code, refused.json()["error"]["code"]) == (
                409,
                "session_active",
            ), path
        gate.release()
        await events.until(finished(running))
    unknown = await client.post(f"/v1/sessions/{sid}/turns/turn_0000/revert")
    assert unknown.status_code == 404, unknown.text


async def test_a_revert_across_a_compaction_checkpoint_is_refused_and_rewind_serves_it(
    scripted: Scripted, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """Issue 26 point 3: a turn a checkpoint summarised cannot be reverted (409
    ``revert_crosses_compaction``; nothing hidden); a turn after the checkpoint can."""
    from tests.unit.compaction.compaction_support import valid_summary

    fake = scripted.fake
    sid = await session(client, made(tmp_path / "ws"))
    fake.push(Reply(text="one"), Reply(text="two"), Reply(text=valid_summary(), chunk_chars=400))
    first, _ = await run_turn_and_wait(client, sid, "first", "turn-cc-1")
    await run_turn_and_wait(client, sid, "second", "turn-cc-2")
    compacted = await client.post(f"/v1/sessions/{sid}/compact")
    assert compacted.status_code == 200, compacted.text
    refused = await client.post(f"/v1/sessions/{sid}/turns/{first}/revert")
    assert (refused.status_code, refused.json()["error"]["code"]) == (
        409,
        "revert_crosses_compaction",
    )
    turns = (await client.get(f"/v1/sessions/{sid}/turns")).json()["turns"]
    assert not any(t["reverted"] for t in turns)
    fake.push(Reply(text="three"))
    third, _ = await run_turn_and_wait(client, sid, "third", "turn-cc-3")
    allowed = await client.post(f"/v1/sessions/{sid}/turns/{third}/revert")
    assert allowed.status_code == 200, allowed.text
    assert allowed.json()["turn_ids"] == [third]


async def test_a_steer_acknowledged_before_the_daemon_died_is_in_the_next_daemons_requests(
    pg_cluster: PgCluster, tmp_path: Path
) -> None:
    """Issue 26 point 1, acknowledged = durable: a steer answered 202 while the model call was
    pending, then the daemon is killed; the next daemon writes it into the Conversation when it
    loads the session, and the next turn's request carries it before the new input."""
    database_url = await pg_cluster.new_database()
    home = tmp_path / "home"
    gate = Gate()
    with FakeProvider([Held(Reply(text="never"), gate), Reply(text="back")]) as fake:
        first = await start_daemon(home=home, database_url=database_url, env=provider_env(fake))
        try:
            async with first.client() as client:
                sid = await session(client, made(tmp_path / "ws"))
                tid = await start_turn(client, sid, "start", "turn-killed")
                await fake.wait_for_requests(1, timeout=30)
                accepted = await steer(client, sid, tid, "remember the deadline", "steer-kill")
                assert accepted.status_code == 202, accepted.text
        finally:
            assert await first.stop(signal.SIGKILL) == -signal.SIGKILL
        second = await start_daemon(home=home, database_url=database_url, env=provider_env(fake))
        try:
            async with second.client() as client:
                await run_turn_and_wait(client, sid, "go on", "turn-after-kill")
        finally:
            gate.release()
            assert await second.stop() == 0
        said = user_texts(fake.requests[-1].body)
        assert said.count("remember the deadline") == 1
        assert said.index("remember the deadline") < said.index("go on")
