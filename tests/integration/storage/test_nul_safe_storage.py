"""NUL-safe storage on real PostgreSQL (docs/reliability.md "NUL-safe storage", issue 12 point 2):
any text a tool can return survives store → load → request, and the request built from the
Conversation the runner holds is the same bytes as the one built after a reload (a restart)."""

from __future__ import annotations

import itertools
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import (
    Message,
    Role,
    TextBlock,
    ToolResultBlock,
    ToolResultState,
    user_text,
)
from openwork_core.models.adapters.openai_chat_encode import encode_messages
from openwork_core.storage.codec import new_message, storable_text, to_item
from openwork_core.storage.postgres.store import PostgresStore
from openwork_tools.modes import SandboxMode
from tests.support import store_rows

ANY_TEXT = st.text(
    st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()), max_size=200
)
_ids = itertools.count()


def _tool_result(text: str) -> Message:
    block = ToolResultBlock(
        id="call_1", name="bash", state=ToolResultState.SUCCESS, output=(TextBlock(text=text),)
    )
    return Message(role=Role.TOOL, content=(block,))


def _request_bytes(messages: list[Message]) -> bytes:
    # the SDKs serialize with json.dumps; ensure_ascii=False fails on a lone surrogate, so a
    # request that encodes here is a request any SDK can send
    return json.dumps(encode_messages(messages), ensure_ascii=False).encode("utf-8")


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(text=ANY_TEXT)
async def test_any_tool_output_survives_store_load_and_request_byte_for_byte(
    store: PostgresStore, text: str
) -> None:
    n = next(_ids)
    sid, tid = f"ses_nul{n}", f"turn_nul{n}"
    await store.create_session(
        session_id=sid,
        working_directory="/tmp",
        agent="default",
        provider_id=None,
        model_name=None,
        sandbox_mode=SandboxMode.AUTO,
    )
    await store_rows.start_turn(
        store.pool,
        session_id=sid,
        turn_id=tid,
        client_request_id=f"c{n}",
        provider_id="p",
        model_name="m",
        app_version="test",
        messages=[new_message(f"msg_u{n}", user_text("run it"), MessageKind.NORMAL)],
    )
    (written,) = await store_rows.append_messages(
        store.pool, sid, tid, [new_message(f"msg_t{n}", _tool_result(text), MessageKind.NORMAL)]
    )
    live = to_item(written).message  # what the runner appends to Chat State
    reloaded = [to_item(m).message for m in await store_rows.session_messages(store.pool, sid)]
    assert reloaded[-1] == live
    (result,) = live.tool_results
    (block,) = result.output
    assert isinstance(block, TextBlock)
    assert block.text == storable_text(text)
    assert _request_bytes([user_text("run it"), live]) == _request_bytes(reloaded)
