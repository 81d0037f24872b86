"""World State through the real turn loop on PostgreSQL (context-window.md §3, §11 item 24):
replayed after a restart exactly once. The sampling itself runs on the in-memory storage:
``unit/session/test_world_state_on_memory.py``."""

from __future__ import annotations

from pathlib import Path

from openwork_chat_state.messages import Role, TextBlock
from openwork_core.context.world_state.project_instructions import (
    PROJECT_INSTRUCTIONS_REPLACEMENT_NOTICE,
)
from openwork_core.context.world_state.sandbox_policy import (
    SANDBOX_POLICY_REPLACEMENT_NOTICE,
)
from openwork_core.context.world_state.user_project import (
    USER_PROJECT_CONTEXT_REPLACEMENT_NOTICE,
)
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.models.port import ModelRequest
from openwork_core.storage.postgres.store import PostgresStore
from tests.support.runtime import runtime


def _user_texts(request: ModelRequest) -> list[str]:
    return [
        "".join(b.text for b in m.content if isinstance(b, TextBlock))
        for m in request.messages
        if m.role is Role.USER
    ]


def _new_user_texts(before: ModelRequest, after: ModelRequest) -> list[str]:
    return _user_texts(after)[len(_user_texts(before)) :]


def _read_then_answer() -> list[ScriptedResponse]:
    return [
        ScriptedResponse(tool_calls=(("c1", "list", {}),)),
        ScriptedResponse(text="done"),
    ]


async def test_a_restarted_session_re_sends_every_retained_section_once_with_its_notice(
    store: PostgresStore, tmp_path: Path
) -> None:
    """§11 item 24 at actor + PostgreSQL level (a gap in the original): the baseline is lost on
    restart, so each section still in the Conversation comes back once with its replacement
    notice; the next model call sends none."""
    model = ScriptedModel([ScriptedResponse(text="first")])
    async with runtime(store, tmp_path, model) as rt:
        (rt.workspace / "AGENTS.md").write_text("Be brief.\n")
        sid = await rt.new_session()
        await rt.run_turn(sid, "one")
    restarted = ScriptedModel(_read_then_answer())
    async with runtime(store, tmp_path, restarted) as rt:
        await rt.run_turn(sid, "two")
    first, second = restarted.requests
    texts = _user_texts(first)
    assert (
        texts[:5]
        == [
            "one",
            *_user_texts(model.requests[0])[1:4],
            "two",
        ][:5]
    )
    added = texts[5:]
    assert [t.split("\n\n", 1)[0] for t in added] == [
        USER_PROJECT_CONTEXT_REPLACEMENT_NOTICE,
        PROJECT_INSTRUCTIONS_REPLACEMENT_NOTICE,
        SANDBOX_POLICY_REPLACEMENT_NOTICE,
    ]
    assert _new_user_texts(first, second) == []
    restarted.assert_invariants(check_prefix=True)
