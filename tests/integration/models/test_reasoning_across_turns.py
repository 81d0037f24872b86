"""Encrypted reasoning through real sessions (issue 14 points 3 and 10): the runner stores the
Responses reasoning item with its assistant message, the next turn sends it back, and after a
compaction it is gone from every request. The session runs in-process on PostgreSQL; each model
call goes through the real ``OpenAIResponsesAdapter`` and SDK to the fake provider."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path

from openwork_chat_state.messages import ProviderOpaqueBlock
from openwork_core.models.adapters.openai_responses import OpenAIResponsesAdapter
from openwork_core.models.adapters.scripted import ScriptedModel
from openwork_core.models.port import ModelEvent, ModelRequest
from openwork_core.storage.postgres.store import PostgresStore
from tests.fakes.fake_provider import FakeProvider
from tests.fakes.fake_script import Reply
from tests.integration.models.loopback import OPTIONS
from tests.support import store_rows
from tests.support.runtime import runtime
from tests.unit.compaction.compaction_support import valid_summary


def reasoning_items(body: Mapping[str, object]) -> list[object]:
    items = body["input"]
    assert isinstance(items, list)
    return [i for i in items if isinstance(i, dict) and i.get("type") == "reasoning"]


async def test_reasoning_goes_back_in_the_next_turn_and_is_dropped_after_a_compaction(
    store: PostgresStore, tmp_path: Path, fake: FakeProvider
) -> None:
    adapter = OpenAIResponsesAdapter(base_url=fake.openai_base_url, api_key="k")

    def real_call(request: ModelRequest) -> AsyncIterator[ModelEvent]:
        return adapter.invoke(request, OPTIONS)

    fake.push(
        Reply(reasoning="think", reasoning_encrypted="enc-1", text="one"),
        Reply(text="two"),
        Reply(text=valid_summary()),
        Reply(text="three"),
    )
    try:
        async with runtime(store, tmp_path, ScriptedModel([real_call] * 4)) as rt:
            sid = await rt.new_session()
            await rt.run_turn(sid, "first request")
            stored = await store_rows.session_messages(store.pool, sid)
            assert any("provider_opaque" in m.content and "enc-1" in m.content for m in stored)
            await rt.run_turn(sid, "second request")
            await rt.core.compact(sid)
            await rt.run_turn(sid, "third request")
            view = await rt.services[sid].chat.context_view()
    finally:
        await adapter.aclose()
    first, second, _summary, third = fake.bodies
    assert reasoning_items(first) == []
    assert reasoning_items(second) == [
        {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "think"}],
            "encrypted_content": "enc-1",
        }
    ]
    assert reasoning_items(third) == []
    assert not any(
        isinstance(b, ProviderOpaqueBlock) for item in view.items for b in item.message.content
    )
