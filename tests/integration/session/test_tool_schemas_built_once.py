"""The finalized tool schemas are built once per process, not on every session load
(issue 13 §5; tools.md §3: the Tool Surface is built at session load and reused by every Turn)."""

from __future__ import annotations

import time
from pathlib import Path

from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.storage.postgres.store import PostgresStore
from tests.support.runtime import runtime


async def test_two_session_loads_share_the_same_tool_definition_objects(
    store: PostgresStore, tmp_path: Path
) -> None:
    """A second session, and the first one loaded again after it was unloaded, advertise the
    very same ``ToolDefinition`` objects (no pydantic schema regenerated), in the same order."""
    model = ScriptedModel([ScriptedResponse(text=f"answer {i}") for i in range(3)])
    async with runtime(store, tmp_path, model) as rt:
        first, second = await rt.new_session(), await rt.new_session()
        await rt.run_turn(first, "hello")
        first_toolset = rt.services[first].toolset
        await rt.run_turn(second, "hello")
        other = rt.services[second].toolset.definitions
        unloaded = await rt.core.sessions.unload_idle(now=time.monotonic() + 10_000)
        assert first in unloaded
        await rt.run_turn(first, "again")
        reloaded_toolset = rt.services[first].toolset
    assert reloaded_toolset is not first_toolset  # really a second load of the session
    before, reloaded = first_toolset.definitions, reloaded_toolset.definitions
    assert len(before) > 5
    assert [d.name for d in reloaded] == [d.name for d in before]
    assert all(a is b for a, b in zip(before, other, strict=True))
    assert all(a is b for a, b in zip(before, reloaded, strict=True))
    assert model.requests[0].tools == model.requests[2].tools
