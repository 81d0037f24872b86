"""Issue 16 point 2: a session's history over real HTTP — Turns (cursor-paged, newest first),
one Turn's timing and usage, rewind targets, the latest plan, sub-agents and trace spans."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from openwork_chat_state.messages import TextBlock
from openwork_core.daemon.desktop_schemas import TranscriptPageBody
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.storage.postgres.agents import AgentStore
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.usage import TokenUsage
from openwork_tools.modes import SandboxMode
from tests.support.live_app import live_app
from tests.support.runtime import Runtime, runtime
from tests.unit.compaction.compaction_support import valid_summary

USAGE = TokenUsage(input_tokens=120, output_tokens=30, cached_input_tokens=80, reasoning_tokens=5)
PLAN = {
    "explanation": "two steps",
    "plan": [
        {"step": "read the schema", "status": "completed"},
        {"step": "write the migration", "status": "in_progress"},
    ],
}


async def _turn(client: httpx.AsyncClient, rt: Runtime, sid: str, text: str) -> str:
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


async def test_turns_are_cursor_paged_newest_first_with_timing_usage_and_a_final_text_preview(
    store: PostgresStore, tmp_path: Path
) -> None:
    """Issue 16 §2: ``GET …/turns`` and ``GET …/turns/{tid}`` (started_at, finished_at, usage
    with the five counters; what the provider reported summed over the Turn's calls)."""
    long_answer = "The answer is " + "long " * 80
    model = ScriptedModel(
        [
            ScriptedResponse(text="first answer", usage=USAGE),
            ScriptedResponse(text="second answer", usage=USAGE),
            ScriptedResponse(tool_calls=(("p1", "update_plan", PLAN),), usage=USAGE),
            ScriptedResponse(text=long_answer, usage=USAGE),
        ]
    )
    async with (
        runtime(store, tmp_path, model) as rt,
        live_app(rt.core) as app,
        app.client() as client,
    ):
        sid = await rt.new_session()
        empty = (await client.get(f"/v1/sessions/{sid}/plan")).json()
        assert empty == {"plan": None}
        first = await _turn(client, rt, sid, "one")
        second = await _turn(client, rt, sid, "two")
        third = await _turn(client, rt, sid, "three")

        page = (await client.get(f"/v1/sessions/{sid}/turns", params={"limit": 2})).json()
        assert [t["turn_id"] for t in page["turns"]] == [third, second]
        rest = (
            await client.get(
                f"/v1/sessions/{sid}/turns", params={"limit": 2, "cursor": page["next_cursor"]}
            )
        ).json()
        assert [t["turn_id"] for t in rest["turns"]] == [first]
        assert rest["next_cursor"] is None

        newest = page["turns"][0]
        assert newest["status"] == "completed" and newest["error_code"] is None
        assert newest["model_calls"] == 2
        assert newest["usage"] == {
            "input_tokens": 240,
            "cached_input_tokens": 160,
            "cache_write_tokens": 0,
            "output_tokens": 60,
            "reasoning_tokens": 10,
        }
        preview = newest["final_text_preview"]
        assert 190 < len(preview) <= 200 and preview.endswith("long…")
        assert preview.startswith("The answer is long long")
        assert rest["turns"][0]["final_text_preview"] == "first answer"
        assert newest["started_at"] <= newest["finished_at"]

        detail = (await client.get(f"/v1/sessions/{sid}/turns/{third}")).json()
        assert detail["final_text"] == long_answer
        assert detail["usage"] == newest["usage"]
        assert (detail["started_at"], detail["finished_at"]) == (
            newest["started_at"],
            newest["finished_at"],
        )

        plan = (await client.get(f"/v1/sessions/{sid}/plan")).json()["plan"]
        assert plan["turn_id"] == third
        assert plan["explanation"] == "two steps"
        assert plan["steps"] == PLAN["plan"]

        trace = (await client.get(f"/v1/sessions/{sid}/turns/{third}/trace")).json()
        kinds = [s["kind"] for s in trace["spans"]]
        assert kinds.count("model_call") >= 2 and "tool_call" in kinds
        tool = next(s for s in trace["spans"] if s["kind"] == "tool_call")
        assert tool["tool_name"] == "update_plan" and tool["status"] == "succeeded"
        unknown = await client.get(f"/v1/sessions/{sid}/turns/turn_nope/trace")
        assert unknown.status_code == 404
        assert unknown.json()["error"]["code"] == "not_found"


async def test_compactions_list_rewind_targets_with_tokens_before_and_after(
    store: PostgresStore, tmp_path: Path
) -> None:
    """Issue 16 §2: ``GET …/compactions`` (id, kind, created_at, tokens before and after as the
    compaction measured them), newest first; the transcript read-back matches its schema."""
    model = ScriptedModel(
        [
            ScriptedResponse(text="one"),
            ScriptedResponse(text=valid_summary()),
            ScriptedResponse(text="two"),
            ScriptedResponse(text=valid_summary({1: "A second, different summary for rewind."})),
        ]
    )
    async with (
        runtime(store, tmp_path, model) as rt,
        live_app(rt.core) as app,
        app.client() as client,
    ):
        sid = await rt.new_session()
        assert (await client.get(f"/v1/sessions/{sid}/compactions")).json() == {"compactions": []}
        await _turn(client, rt, sid, "first request")
        manual = (await client.post(f"/v1/sessions/{sid}/compact")).json()
        await _turn(client, rt, sid, "second request")
        rewound = (
            await client.post(
                f"/v1/sessions/{sid}/rewind", json={"compaction_id": manual["compaction_id"]}
            )
        ).json()
        listed = (await client.get(f"/v1/sessions/{sid}/compactions")).json()["compactions"]
        assert [c["compaction_id"] for c in listed] == [
            rewound["compaction_id"],
            manual["compaction_id"],
        ]
        assert [c["kind"] for c in listed] == ["rewind", "manual"]
        assert listed[1]["tokens_before"] == manual["before_tokens"] > 0
        assert listed[1]["tokens_after"] == manual["after_tokens"]
        assert listed[0]["tokens_before"] == rewound["before_tokens"]
        assert listed[0]["parent_compaction_id"] == manual["compaction_id"]
        transcript = await client.get(
            f"/v1/sessions/{sid}/transcript",
            params={"compaction_id": manual["compaction_id"]},
        )
        page = TranscriptPageBody.model_validate(transcript.json())
        assert page.messages[0].content == [TextBlock(text="first request")]


async def test_children_lists_sub_agent_sessions_with_their_status(
    store: PostgresStore, tmp_path: Path
) -> None:
    """Issue 16 §2: ``GET …/children`` — each sub-agent with task name, role and status."""
    async with (
        runtime(store, tmp_path, ScriptedModel()) as rt,
        live_app(rt.core) as app,
        app.client() as client,
    ):
        sid = await rt.new_session()
        child = await AgentStore(store.pool).create_child_session(
            parent_session_id=sid,
            task_name="scan_tests",
            agent_role="explorer",
            working_directory=str(rt.workspace),
            provider_id="default",
            model_name=None,
            sandbox_mode=SandboxMode.AUTO,
            spawn_span_id=None,
        )
        (listed,) = (await client.get(f"/v1/sessions/{sid}/children")).json()["children"]
        assert listed["session_id"] == child.id
        assert (listed["task_name"], listed["agent_role"]) == ("scan_tests", "explorer")
        assert (listed["status"], listed["turn_count"], listed["last_turn_status"]) == (
            "idle",
            0,
            None,
        )
        assert (await client.get(f"/v1/sessions/{child.id}/children")).json() == {"children": []}
        missing = await client.get("/v1/sessions/ses_missing/children")
        assert missing.status_code == 404
