"""``GET …/messages`` serves a stored tool result's ``file_change`` artifacts as the OpenAPI
document says: camelCase (tools.md §8, issue 25 point 3), and a message without artifacts
validates too."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import Role
from openwork_core.daemon.views import message_json
from openwork_core.ids import MessageId, SessionId, TurnId
from openwork_core.storage.records import StoredMessage
from openwork_tools.results import FileChange
from tests.support.contract import validate

CHANGE = FileChange(
    change_id="chg-1",
    path="notes.txt",
    kind="created",
    additions=1,
    deletions=0,
    hunks=(),
    before_hash=None,
    after_hash="h1",
    before_content=None,
    after_content="hello\n",
)


def _stored(block: dict[str, object]) -> StoredMessage:
    return StoredMessage(
        id=MessageId("m-1"),
        session_id=SessionId("s-1"),
        turn_id=TurnId("t-1"),
        sequence=3,
        role=Role.TOOL,
        kind=MessageKind.NORMAL,
        content=orjson.dumps([block]).decode(),
        provider_call_id="c-1",
        tool_name="write",
        created_at=datetime(2026, 12, 2, 3, 4, 5, tzinfo=UTC),
    )


def test_a_tool_results_file_change_artifact_is_served_in_camel_case_as_documented() -> None:
    result = {
        "type": "tool_result",
        "id": "c-1",
        "name": "write",
        "output": [{"type": "text", "text": "wrote notes.txt"}],
        "state": "success",
    }
    schema = {"$ref": "#/components/schemas/MessageBody"}
    plain = message_json(_stored(result))
    validate(schema, plain, "a message without artifacts")
    served = message_json(_stored({**result, "artifacts": [CHANGE.to_json()]}))
    validate(schema, served, "a message with a file change")
    assert isinstance(served, dict)
    (block,) = served["content"]  # type: ignore[misc]
    assert block["artifacts"] == [CHANGE.to_json()]  # type: ignore[index]
    assert served["created_at"] == "2026-12-02T03:04:05Z"
