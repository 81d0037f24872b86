"""No database text reaches a client (docs/reliability.md "One envelope everywhere"; issue 12
point 4): when PostgreSQL refuses a write, the turn's message and the error envelope name what
failed, and the database's own text stays in the log."""

from __future__ import annotations

from pathlib import Path

import pytest

from openwork_core.daemon.errors import response_for
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.session.errors import TurnNotRecorded
from openwork_core.session.input import TextInput
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import TurnStatus
from tests.support.faults import fail_writes
from tests.support.runtime import runtime

INJECTED = "injected failure"  # the text the fault trigger raises (tests/support/faults.py)


async def test_a_failed_tool_result_write_fails_the_turn_without_the_database_text(
    store: PostgresStore, tmp_path: Path
) -> None:
    model = ScriptedModel(
        [
            ScriptedResponse(tool_calls=(("c1", "list", {}),)),
            ScriptedResponse(text="never"),
        ]
    )
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        await fail_writes(store, "messages", when="NEW.role = 'tool'")
        turn_id, _ = await rt.run_turn(sid, "look")
        view = await rt.core.turn_view(sid, turn_id)
    assert (view.status, view.error_code) == (TurnStatus.FAILED, "persistence_error")
    assert view.message == "could not persist a tool result"
    assert INJECTED not in (view.message or "")


async def test_a_turn_that_cannot_be_recorded_answers_503_without_the_database_text(
    store: PostgresStore, tmp_path: Path
) -> None:
    model = ScriptedModel([ScriptedResponse(text="never")])
    async with runtime(store, tmp_path, model) as rt:
        sid = await rt.new_session()
        await fail_writes(store, "turns")
        with pytest.raises(TurnNotRecorded) as refused:
            await rt.core.start_turn(sid, client_request_id="r1", inputs=[TextInput(text="hi")])
    assert INJECTED in str(refused.value)  # the log line keeps it …
    response = response_for(refused.value)
    assert response.status_code == 503
    assert b'"code":"persistence_error"' in response.body
    assert INJECTED.encode() not in response.body  # … the client never sees it
