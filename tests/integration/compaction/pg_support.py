"""Sessions, turns and messages on real PostgreSQL for the compaction integration tests."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import JsonValue

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import Message
from openwork_core.storage.codec import new_message
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import NewMessage, StoredMessage, TurnStatus
from openwork_tools.modes import SandboxMode
from tests.support import store_rows


async def new_session(store: PostgresStore, session_id: str = "s1") -> str:
    await store.create_session(
        session_id=session_id,
        working_directory="/tmp",
        agent="default",
        provider_id=None,
        model_name=None,
        sandbox_mode=SandboxMode.AUTO,
    )
    return session_id


def row(
    message_id: str,
    message: Message,
    kind: MessageKind = MessageKind.NORMAL,
    artifacts: Sequence[JsonValue] = (),
) -> NewMessage:
    return new_message(message_id, message, kind, artifacts)


async def turn(
    store: PostgresStore,
    session_id: str,
    turn_id: str,
    opening: Sequence[NewMessage],
    rest: Sequence[NewMessage] = (),
    *,
    finish: bool = True,
) -> list[StoredMessage]:
    """A turn with its opening user messages and the rest; finished unless told otherwise."""
    _, stored = await store_rows.start_turn(
        store.pool,
        session_id=session_id,
        turn_id=turn_id,
        client_request_id=f"req-{turn_id}",
        provider_id="p",
        model_name="m",
        app_version="test",
        messages=list(opening),
    )
    if rest:
        stored += await store_rows.append_messages(store.pool, session_id, turn_id, list(rest))
    if finish:
        await store_rows.finish_turn(store.pool, turn_id, TurnStatus.COMPLETED)
    return stored
