"""Context inspection against the request actually sent (context-window.md §8, §11 item 18 — an
end-to-end comparison the original lacked)."""

from __future__ import annotations

import math
from pathlib import Path

import orjson

from openwork_chat_state.messages import Role
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.storage.postgres.store import PostgresStore
from tests.support import store_rows
from tests.support.runtime import runtime


async def test_the_inspected_conversation_is_the_prefix_the_next_model_call_receives(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§8: the same prepare; no World State sampling, no provider call, nothing saved."""
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=(("c1", "list", {}),)),
            ScriptedResponse(text="first done"),
            ScriptedResponse(text="second done"),
        ]
    )
    async with runtime(store, tmp_path, model) as rt:
        (rt.workspace / "AGENTS.md").write_text("Rules.\n")
        sid = await rt.new_session()
        await rt.run_turn(sid, "one")
        calls_before = len(model.requests)
        messages_before = len(await store_rows.session_messages(store.pool, sid))
        inspection = await rt.core.inspect_context_window(sid)
        assert len(model.requests) == calls_before, "inspection never calls the provider"
        assert len(await store_rows.session_messages(store.pool, sid)) == messages_before, (
            "nothing saved"
        )
        await rt.run_turn(sid, "two")
    next_request = model.requests[-1]
    system = [m for m in next_request.messages if m.role is Role.SYSTEM]
    conversation = next_request.messages[len(system) :]
    inspected = inspection.conversation
    assert orjson.dumps(conversation[: len(inspected)]) == orjson.dumps(inspected)
    assert [p.content for p in inspection.system] == [s.content[0].text for s in system]  # type: ignore[union-attr]
    assert orjson.dumps(inspection.tools) == orjson.dumps(next_request.tools)
    assert len(inspection.provenance) == len(inspected)


async def test_every_inspected_region_measures_as_its_own_compact_json(
    store: PostgresStore, tmp_path: Path
) -> None:
    """daemon-api.md §3: tokens = ceil(len(compact JSON of that array) / 4), sum = estimate."""
    model = ScriptedModel([ScriptedResponse(text="hi")])
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        await rt.run_turn(sid, "hello")
        document = orjson.loads((await rt.core.inspect_context_window(sid)).to_json())
    budget = document["budget"]
    for region, key in (
        ("system", "system_context_tokens"),
        ("conversation", "conversation_tokens"),
        ("tools", "tool_surface_tokens"),
    ):
        assert budget[key] == math.ceil(len(orjson.dumps(document[region])) / 4), region
    assert budget["estimated_input_tokens"] == sum(
        budget[k] for k in ("system_context_tokens", "conversation_tokens", "tool_surface_tokens")
    )
    limits = document["limits"]
    assert limits == {
        "context_window": 200_000,
        "effective_input_tokens": 168_000,
        "auto_compact_token_limit": 142_800,
    }
    expected = (
        100
        * (budget["estimated_input_tokens"] + budget["reserved_output_tokens"])
        / min(limits["auto_compact_token_limit"], limits["effective_input_tokens"])
    )
    assert math.isclose(document["auto_compact_percent"], expected)
    assert [p.get("kind") for p in document["provenance"]][:1] == ["normal"]
