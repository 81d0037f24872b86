"""Issue 16 point 1: the session list, PATCH and DELETE over real HTTP, real PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from openwork_core.daemon.desktop_schemas import SessionSummaryWithSnapshot
from openwork_core.daemon.openapi.__main__ import served_document
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse, scripted_events
from openwork_core.models.port import ModelEvent, ModelRequest
from openwork_core.session.updates import PermissionRequested
from openwork_core.storage.postgres.agents import AgentStore
from openwork_core.storage.postgres.store import PostgresStore
from openwork_tools.modes import SandboxMode
from openwork_tools.sandbox.probe import probe_sandbox
from tests.support.live_app import LiveApp, live_app
from tests.support.runtime import Runtime, runtime


def _answer(text: str) -> ScriptedResponse:
    return ScriptedResponse(text=text)


async def _turn(client: httpx.AsyncClient, rt: Runtime, sid: str, text: str) -> str:
    """Start a turn over HTTP and wait (bounded) for its terminal state through the core."""
    _, subscription = await rt.core.subscribe(sid, None)
    try:
        response = await client.post(
            f"/v1/sessions/{sid}/turns",
            json={"client_request_id": f"r-{text}", "input": [{"type": "text", "text": text}]},
        )
        assert response.status_code == 202, response.text
        turn_id = str(response.json()["turn_id"])
        async with asyncio.timeout(20):
            while True:
                envelope = await subscription.queue.get()
                if envelope.turn_id == turn_id and envelope.update.type == "turn_finished":
                    return turn_id
    finally:
        subscription.close()


@pytest.fixture
async def served(store: PostgresStore, tmp_path: Path) -> AsyncIterator[tuple[Runtime, LiveApp]]:
    async with runtime(store, tmp_path, ScriptedModel()) as rt, live_app(rt.core) as app:
        yield rt, app


async def test_the_list_shows_a_title_from_the_first_line_of_the_first_user_message_until_the_user_sets_one(
    served: tuple[Runtime, LiveApp],
) -> None:
    """Issue 16 §1: title = first line of the first user message (≤ 80 characters) until set;
    PATCH title sets it, PATCH title null puts the derived one back; turn count and activity."""
    rt, app = served
    long_line = "Refactor the storage layer " + "x" * 100
    rt.model.push(_answer("done"), _answer("again"))
    async with app.client() as client:
        sid = await rt.new_session()
        listed = (await client.get("/v1/sessions")).json()["sessions"]
        assert listed[0]["title"] is None and listed[0]["turn_count"] == 0
        await _turn(client, rt, sid, f"\n  {long_line}\nsecond line")
        await _turn(client, rt, sid, "a later message")
        (row,) = (await client.get("/v1/sessions")).json()["sessions"]
        assert row["title"] == long_line[:79] + "…" and len(row["title"]) == 80
        assert row["title_is_derived"] is True
        assert row["turn_count"] == 2 and row["status"] == "idle"
        assert row["last_activity_at"] > row["created_at"]

        patched = await client.patch(f"/v1/sessions/{sid}", json={"title": "Storage work"})
        assert patched.status_code == 200
        assert patched.json()["title"] == "Storage work"
        assert patched.json()["title_is_derived"] is False
        assert (await client.get(f"/v1/sessions/{sid}")).json()["title"] == "Storage work"

        cleared = await client.patch(f"/v1/sessions/{sid}", json={"title": None})
        assert cleared.json()["title"] == long_line[:79] + "…"
        for blank_title in ("   ", "\u200b", "\u200b \u2060\ufeff\u200d"):  # nothing drawn
            blank = await client.patch(f"/v1/sessions/{sid}", json={"title": blank_title})
            assert blank.status_code == 422, blank_title
            assert blank.json()["error"]["code"] == "invalid_request"
        assert (await client.get(f"/v1/sessions/{sid}")).json()["title_is_derived"] is True


async def test_archived_and_workspace_filters_and_cursor_pages_cover_every_session_once(
    served: tuple[Runtime, LiveApp], tmp_path: Path
) -> None:
    """Issue 16 §1: ``?archived=``, ``?workspace=`` and cursor pagination (newest first)."""
    rt, app = served
    other = tmp_path / "other-workspace"
    other.mkdir()
    async with app.client() as client:
        ids = [await rt.new_session() for _ in range(4)]
        elsewhere = (await rt.core.create_session(workspace=str(other))).id
        await client.patch(f"/v1/sessions/{ids[1]}", json={"archived": True})

        seen: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            params: dict[str, str | int] = {"limit": 2}
            if cursor is not None:
                params["cursor"] = cursor
            page = (await client.get("/v1/sessions", params=params)).json()
            seen += [s["session_id"] for s in page["sessions"]]
            pages += 1
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert pages == 3
        assert seen == [elsewhere, *reversed(ids)]

        archived = (await client.get("/v1/sessions", params={"archived": "true"})).json()
        assert [s["session_id"] for s in archived["sessions"]] == [ids[1]]
        assert archived["sessions"][0]["archived"] is True
        active = (await client.get("/v1/sessions", params={"archived": "false"})).json()
        assert ids[1] not in [s["session_id"] for s in active["sessions"]]
        in_other = (await client.get("/v1/sessions", params={"workspace": str(other)})).json()
        assert [s["session_id"] for s in in_other["sessions"]] == [elsewhere]

        unpaged = (await client.get("/v1/sessions")).json()
        assert [s["session_id"] for s in unpaged["sessions"]] == seen
        assert unpaged["next_cursor"] is None

        bad = await client.get("/v1/sessions", params={"cursor": "not-a-cursor"})
        assert bad.status_code == 422
        assert bad.json()["error"]["code"] == "invalid_request"


async def test_reading_a_session_does_not_load_its_actor_and_answers_the_fresh_snapshot(
    served: tuple[Runtime, LiveApp],
) -> None:
    """Issue 16 §1 (reads never load an actor): GET one session answers what a freshly loaded
    actor would (idle, sequence 0) and leaves the session unloaded."""
    rt, app = served
    async with app.client() as client:
        sid = await rt.new_session(SandboxMode.ACCEPT_EDITS)
        body = (await client.get(f"/v1/sessions/{sid}")).json()
        assert rt.core.sessions.get(sid) is None
        loaded = await rt.core.snapshot(sid)
        assert body["snapshot"]["runtime"] == {"state": "idle"}
        assert body["snapshot"]["lastUpdateSequence"] == loaded.last_update_sequence == 0
        assert body["snapshot"]["permissionMode"] == loaded.permission_mode.value
        assert body["snapshot"]["sandbox"]["state"] == loaded.sandbox.state
        assert body["status"] == "idle" and body["permission_mode"] == "accept_edits"
        assert SessionSummaryWithSnapshot.model_validate(body).snapshot.root == loaded


async def test_delete_is_refused_while_a_turn_runs_and_then_removes_rows_children_and_spill_files(
    store: PostgresStore, tmp_path: Path
) -> None:
    """Issue 16 §1: 409 ``session_active`` while a Turn runs (status running in the list); then
    204, the session's and its sub-agent's rows gone in one transaction, their spill directories
    removed, and every route for the session answers 404 ``not_found``."""
    release = asyncio.Event()

    async def held(_request: ModelRequest) -> AsyncIterator[ModelEvent]:
        await release.wait()
        for event in scripted_events(_answer("finished")):
            yield event

    model = ScriptedModel([held])
    async with (
        runtime(store, tmp_path, model) as rt,
        live_app(rt.core) as app,
        app.client() as client,
    ):
        sid = await rt.new_session()
        accepted = await client.post(
            f"/v1/sessions/{sid}/turns",
            json={"client_request_id": "r1", "input": [{"type": "text", "text": "hi"}]},
        )
        turn_id = accepted.json()["turn_id"]
        await model.wait_for_requests(1, timeout=10)
        # a sub-agent row created while the root turn runs (reconcile runs before a turn)
        child = await AgentStore(store.pool).create_child_session(
            parent_session_id=sid,
            task_name="explore_docs",
            agent_role="explorer",
            working_directory=str(rt.workspace),
            provider_id="default",
            model_name=None,
            sandbox_mode=SandboxMode.AUTO,
            spawn_span_id=None,
        )
        spill = tmp_path / "home" / "spill"
        for owner in (sid, child.id):
            (spill / owner).mkdir(parents=True, exist_ok=True)
            (spill / owner / "out.txt").write_text("spilled output")
        (spill / "unrelated").mkdir()

        (row,) = (await client.get("/v1/sessions")).json()["sessions"]
        assert row["status"] == "running" and row["active_turn_id"] == turn_id

        refused = await client.delete(f"/v1/sessions/{sid}")
        assert refused.status_code == 409
        assert refused.json()["error"]["code"] == "session_active"
        sub = await client.delete(f"/v1/sessions/{child.id}")
        assert sub.status_code == 409
        assert sub.json()["error"]["code"] == "sub_agent_not_deletable"

        _, subscription = await rt.core.subscribe(sid, None)
        release.set()
        async with asyncio.timeout(20):
            while (await subscription.queue.get()).update.type != "turn_finished":
                pass
        subscription.close()

        deleted = await client.delete(f"/v1/sessions/{sid}")
        assert deleted.status_code == 204 and deleted.content == b""
        async with store.pool.acquire() as conn:
            for table in (
                "sessions",
                "turns",
                "messages",
                "trace_spans",
                "conversation_compactions",
            ):
                column = "id" if table == "sessions" else "session_id"
                left = await conn.fetchval(
                    f"SELECT count(*) FROM {table} WHERE {column} = ANY($1::text[])",
                    [sid, child.id],
                )
                assert left == 0, table
        assert not (spill / sid).exists() and not (spill / child.id).exists()
        assert (spill / "unrelated").is_dir()
        assert rt.core.sessions.get(sid) is None

        await _every_route_is_not_found(client, app, sid, turn_id)


async def _every_route_is_not_found(
    client: httpx.AsyncClient, app: LiveApp, sid: str, turn_id: str
) -> None:
    """Every documented route with ``{sid}`` answers 404 ``not_found`` for the deleted session."""
    document = served_document()
    bodies: dict[str, object] = {
        "startTurn": {"client_request_id": "x", "input": [{"type": "text", "text": "x"}]},
        "steerTurn": {"client_request_id": "x", "input": [{"type": "text", "text": "x"}]},
        "resolvePermission": {"decision": "deny"},
        "setPermissionMode": {"mode": "auto"},
        "rewindSession": {"compaction_id": "c"},
        "applyFileChanges": {"change_ids": ["c"]},
        "updateSession": {"title": "t"},
        "forkSession": {},
    }
    checked = 0
    for path, item in document["paths"].items():
        if "{sid}" not in path:
            continue
        for method, operation in item.items():
            url = (
                path.replace("{sid}", sid)
                .replace("{tid}", turn_id)
                .replace("{tool_call_id}", "tc")
                .replace("{direction}", "undo")
            )
            body = bodies.get(operation["operationId"])
            response = await client.request(method.upper(), url, json=body)
            assert response.status_code == 404, (method, path, response.text)
            assert response.json()["error"]["code"] == "not_found", (method, path)
            checked += 1
    assert checked >= 20


async def test_delete_is_refused_while_an_approval_is_pending(
    store: PostgresStore, tmp_path: Path
) -> None:
    """Issue 16 §1 (permissions-sandbox.md §5 step 3): a dangerous command waits for the user;
    meanwhile DELETE answers 409 ``session_active``; once denied and finished, 204."""
    sandbox = await probe_sandbox()
    assert sandbox.available, f"bubblewrap sandbox unavailable: {sandbox.reason}"
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=(("b1", "bash", {"command": "rm -rf build"}),)),
            _answer("not removed"),
        ]
    )
    async with (
        runtime(store, tmp_path, model, sandbox=sandbox) as rt,
        live_app(rt.core) as app,
        app.client() as client,
    ):
        sid = await rt.new_session()
        _, subscription = await rt.core.subscribe(sid, None)
        accepted = await client.post(
            f"/v1/sessions/{sid}/turns",
            json={"client_request_id": "r", "input": [{"type": "text", "text": "clean"}]},
        )
        turn_id = accepted.json()["turn_id"]
        async with asyncio.timeout(20):
            while (requested := await subscription.queue.get()).update.type != (
                "permission_requested"
            ):
                pass
        assert isinstance(requested.update, PermissionRequested)
        request = requested.update.request
        refused = await client.delete(f"/v1/sessions/{sid}")
        assert refused.status_code == 409
        assert refused.json()["error"]["code"] == "session_active"
        decided = await client.post(
            f"/v1/sessions/{sid}/turns/{turn_id}/permissions/{request.tool_call_id}",
            json={"decision": "deny"},
        )
        assert decided.status_code == 202
        async with asyncio.timeout(20):
            while (await subscription.queue.get()).update.type != "turn_finished":
                pass
        subscription.close()
        assert (await client.delete(f"/v1/sessions/{sid}")).status_code == 204
        assert (await client.get(f"/v1/sessions/{sid}")).status_code == 404
