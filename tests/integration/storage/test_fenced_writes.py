"""One-statement fenced writes with owner-assigned sequences (issue 13, point 2; storage.md §3,
§4; the ownership issue's fencing): a stale owner writes nothing, the in-memory sequence is
re-read after a write whose outcome is unknown and after another writer took a sequence, and
deterministic ids take no sequence."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import pytest

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import (
    Message,
    Role,
    TextBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
    user_text,
)
from openwork_core.ids import ClientRequestId, MessageId, SessionId, TurnId, new_message_id
from openwork_core.session.ownership import LeaseLost, SessionLease, daemon_identity
from openwork_core.session.storage import (
    OutgoingMessage,
    RecordNotFound,
    StepWrite,
    TurnClosing,
    TurnOpening,
    TurnStatus,
)
from openwork_core.storage.postgres import fenced, session_storage
from openwork_core.storage.postgres.connection import create_pool
from openwork_core.storage.postgres.ownership import PostgresOwnership
from openwork_core.storage.postgres.session_storage import PostgresSessionStorage
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.usage_records import ModelCallRecord
from openwork_core.usage import TokenUsage
from openwork_tools.modes import SandboxMode
from tests.support import store_rows

SID = SessionId("ses_fenced")
TURN = TurnId("turn_fenced")


def _message(text: str, message_id: str | None = None) -> OutgoingMessage:
    return OutgoingMessage(id=MessageId(message_id or new_message_id()), message=user_text(text))


async def _owned(store: PostgresStore, tmp_path: Path, name: str) -> SessionLease:
    ownership = PostgresOwnership(store.pool, daemon_identity(f"http://{name}", tmp_path), 30)
    await ownership.register()
    lease = await ownership.acquire(SID)
    assert isinstance(lease, SessionLease)
    return lease


async def _started(store: PostgresStore, lease: SessionLease | None) -> PostgresSessionStorage:
    storage = PostgresSessionStorage(store.pool, SID, lease)
    await storage.start_turn(
        TurnOpening(
            turn_id=TURN,
            client_request_id=ClientRequestId("req-fenced"),
            provider_id="p",
            model_name="m",
            app_version="test",
        ),
        [_message("hello")],
    )
    return storage


@pytest.fixture
async def session(store: PostgresStore) -> None:
    await store.create_session(
        session_id=SID,
        working_directory="/tmp",
        agent="default",
        provider_id=None,
        model_name=None,
        sandbox_mode=SandboxMode.AUTO,
    )


async def _expire(store: PostgresStore) -> None:
    async with store.pool.acquire() as conn:
        await conn.execute(
            "UPDATE session_leases SET expires_at = now() - interval '1 second'"
            " WHERE session_id = $1",
            SID,
        )


async def _sequences(store: PostgresStore) -> list[int]:
    async with store.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT sequence FROM messages WHERE session_id = $1 ORDER BY sequence", SID
        )
    return [r["sequence"] for r in rows]


@pytest.mark.usefixtures("session")
async def test_a_fenced_write_after_a_takeover_is_refused_and_writes_nothing(
    store: PostgresStore, tmp_path: Path
) -> None:
    """Ownership fencing in the one write statement: the old owner's message and its turn
    counters are both refused (LeaseLost), nothing of either is written."""
    old = await _owned(store, tmp_path / "a", "a")
    storage = await _started(store, old)
    await _expire(store)  # the old owner stalled past its lease …
    await _owned(store, tmp_path / "b", "b")  # … and another daemon took the session over
    with pytest.raises(LeaseLost, match="no longer owns"):
        await storage.append(TURN, _answer(_record(1, TokenUsage(input_tokens=5)), calls=3))
    with pytest.raises(LeaseLost):
        await storage.append(TURN, StepWrite(submission=2))
    assert await _sequences(store) == [1]
    turn = await store.get_turn(SID, TURN)
    assert (turn.input_tokens, turn.tool_call_count, turn.model_submission_count) == (None, 0, 0)


@pytest.mark.usefixtures("session")
async def test_a_fenced_write_with_an_expired_lease_is_refused(
    store: PostgresStore, tmp_path: Path
) -> None:
    lease = await _owned(store, tmp_path, "a")
    storage = await _started(store, lease)
    await _expire(store)
    with pytest.raises(LeaseLost, match="expired"):
        await storage.append(TURN, _messages(_message("late")))
    assert await _sequences(store) == [1]


@pytest.mark.usefixtures("session")
async def test_after_a_write_whose_outcome_is_unknown_the_next_write_rereads_the_sequence(
    store: PostgresStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The statement committed but its answer was lost: the caller saw an error, so the
    in-memory sequence is forgotten and the next write numbers after what is stored."""
    storage = await _started(store, await _owned(store, tmp_path, "a"))
    real = fenced.write_fenced

    async def committed_then_lost(*args: object, **kwargs: object) -> fenced.FencedWrite:
        await real(*args, **kwargs)  # type: ignore[arg-type]
        raise ConnectionResetError("the answer never arrived")

    monkeypatch.setattr(session_storage, "write_fenced", committed_then_lost)
    with pytest.raises(ConnectionResetError):
        await storage.append(TURN, _messages(_message("committed, unknown to the caller")))
    monkeypatch.setattr(session_storage, "write_fenced", real)
    (origin,) = await storage.append(TURN, _messages(_message("next")))
    assert origin.sequence == 3
    assert await _sequences(store) == [1, 2, 3]


@pytest.mark.usefixtures("session")
async def test_a_sequence_taken_by_another_writer_is_reread_and_the_write_retried(
    store: PostgresStore, tmp_path: Path
) -> None:
    """A row written past this owner (the store's own append) makes the in-memory sequence
    stale: the unique violation re-reads it once, and sequences stay gapless."""
    storage = await _started(store, await _owned(store, tmp_path, "a"))
    await store_rows.append_messages(
        store.pool,
        SID,
        TURN,
        [session_storage.new_message(MessageId("m-other"), user_text("x"), MessageKind.NORMAL)],
    )
    (origin,) = await storage.append(TURN, _messages(_message("mine")))
    assert origin.sequence == 3
    assert await _sequences(store) == [1, 2, 3]


@pytest.mark.usefixtures("session")
async def test_a_deterministic_id_already_stored_takes_no_sequence(store: PostgresStore) -> None:
    """storage.md §4: World State ids are idempotent; the repeated row answers its stored
    origin and the next new row gets the next sequence (gapless)."""
    storage = await _started(store, None)
    first = await storage.append(TURN, _messages(_message("ws", "world-state:t:1:1:env")))
    again = await storage.append(
        TURN, _messages(_message("ws", "world-state:t:1:1:env"), _message("new"))
    )
    assert again[0] == first[0]
    assert again[1].sequence == first[0].sequence + 1
    assert await _sequences(store) == [1, 2, 3]


@pytest.mark.usefixtures("session")
async def test_a_tool_result_counts_the_next_submission_in_the_same_write(
    store: PostgresStore,
) -> None:
    """storage.md §3 "before each provider submission": the counter rides on the write that
    precedes it; the closing's exact counts take a never-sent submission back."""
    storage = await _started(store, None)
    await storage.append(TURN, StepWrite(submission=1))
    (origin,) = await storage.append(TURN, StepWrite(messages=(_message("result"),), submission=2))
    turn = await store.get_turn(SID, TURN)
    assert (turn.model_call_count, turn.model_submission_count) == (2, 2)
    assert origin.sequence == 2


async def test_the_one_statement_writes_messages_and_counters_atomically(
    store: PostgresStore,
) -> None:
    """A statement that fails (here: an unknown session, a foreign key) writes neither the
    message nor the counters."""
    storage = PostgresSessionStorage(store.pool, SessionId("ses_missing"))
    with pytest.raises(asyncpg.ForeignKeyViolationError):
        await storage.append(TURN, _answer(_record(1, TokenUsage(input_tokens=1)), calls=1))
    async with store.pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM messages") == 0


def _messages(*messages: OutgoingMessage) -> StepWrite:
    return StepWrite(messages=messages)


def _answer(call: ModelCallRecord, *, calls: int) -> StepWrite:
    """A response of ``calls`` tool calls, as the step writer writes it ahead."""
    response, _ = _step([f"c{i}" for i in range(calls)])
    return StepWrite(messages=(response,), response=call)


def _step(call_ids: list[str]) -> tuple[OutgoingMessage, list[OutgoingMessage]]:
    calls = tuple(
        ToolCallBlock(id=c, name="read", input='{"path": "a"}', state=ToolCallState.SUBMITTED)
        for c in call_ids
    )
    response = OutgoingMessage(
        id=new_message_id(), message=Message(role=Role.ASSISTANT, content=calls)
    )
    results = [
        OutgoingMessage(
            id=new_message_id(),
            message=Message(
                role=Role.TOOL,
                content=(
                    ToolResultBlock(
                        id=c,
                        name="read",
                        output=(TextBlock(text="a"),),
                        state=ToolResultState.SUCCESS,
                    ),
                ),
            ),
        )
        for c in call_ids
    ]
    return response, results


def _record(model_call: int, usage: TokenUsage) -> ModelCallRecord:
    return ModelCallRecord(
        model_call=model_call,
        submission=1,
        provider_id="p",
        model_name="m",
        usage=usage,
        estimated_input_tokens=100,
        input_truncation_suspected=False,
        stable_prefix_hash="h",
        request_bytes=400,
        shared_prefix_bytes=None,
        cache_miss=None,
        idle_seconds=None,
    )


@pytest.mark.usefixtures("session")
async def test_a_deferred_step_is_one_statement_with_its_results_and_every_counter(
    store: PostgresStore, tmp_path: Path, database_url: str
) -> None:
    """Issue 13 point 2, one transaction per steady call: the response, its results, the
    submission's usage row, its tokens and tool calls and the next submission's counter are
    one round trip to the server (no BEGIN/COMMIT), fenced by the lease."""
    lease = await _owned(store, tmp_path, "a")
    await (await _started(store, lease)).append(TURN, StepWrite(submission=1))
    pool = await create_pool(database_url, min_size=1, max_size=1)  # one logged connection
    try:
        storage = PostgresSessionStorage(pool, SID, lease)
        response, results = _step(["c1", "c2"])
        usage = TokenUsage(input_tokens=50, output_tokens=4)
        queries: list[str] = []
        (holder,) = pool._holders
        assert holder._con is not None
        holder._con.add_query_logger(lambda logged: queries.append(logged.query))
        origins = await storage.append(
            TURN,
            StepWrite(messages=(response, *results), response=_record(1, usage), submission=2),
        )
        await asyncio.sleep(0)  # asyncpg calls the loggers with call_soon
    finally:
        await pool.close()
    assert len(queries) == 1, queries
    assert [o.sequence for o in origins] == [2, 3, 4]
    turn = await store.get_turn(SID, TURN)
    assert (
        turn.input_tokens,
        turn.output_tokens,
        turn.tool_call_count,
        turn.model_call_count,
        turn.model_submission_count,
    ) == (50, 4, 2, 2, 2)
    (recorded,) = await PostgresSessionStorage(store.pool, SID).turn_model_calls(TURN)
    assert recorded.message_id == response.id


@pytest.mark.usefixtures("session")
async def test_a_deferred_step_after_a_takeover_is_refused_and_writes_nothing(
    store: PostgresStore, tmp_path: Path
) -> None:
    """The stale owner's response, results, usage row and counters are refused together."""
    storage = await _started(store, await _owned(store, tmp_path / "a", "a"))
    await storage.append(TURN, StepWrite(submission=1))
    await _expire(store)
    await _owned(store, tmp_path / "b", "b")
    response, results = _step(["c1"])
    usage = TokenUsage(input_tokens=5)
    with pytest.raises(LeaseLost, match="no longer owns"):
        await storage.append(
            TURN,
            StepWrite(messages=(response, *results), response=_record(1, usage), submission=2),
        )
    assert await _sequences(store) == [1]
    turn = await store.get_turn(SID, TURN)
    assert (turn.input_tokens, turn.tool_call_count, turn.model_submission_count) == (None, 0, 1)
    assert await storage.turn_model_calls(TURN) == []


@pytest.mark.usefixtures("session")
async def test_a_fresh_row_whose_id_is_already_stored_fails_the_write_whole(
    store: PostgresStore,
) -> None:
    """A response's ids are new (``new_message_id``), so its write does not look them up: an id
    already stored is a primary-key violation — never a silent skip — and the counters stay."""
    storage = await _started(store, None)
    (stored,) = await storage.append(TURN, _messages(_message("first")))
    response, _ = _step(["c1"])
    taken = OutgoingMessage(id=stored.message_id, message=response.message)
    with pytest.raises(asyncpg.UniqueViolationError):
        await storage.append(
            TURN, StepWrite(messages=(taken,), response=_record(1, TokenUsage(input_tokens=3)))
        )
    turn = await store.get_turn(SID, TURN)
    assert (turn.input_tokens, turn.tool_call_count) == (None, 0)
    (after,) = await storage.append(TURN, _messages(_message("next")))
    assert after.sequence == 3
    assert await _sequences(store) == [1, 2, 3]


@pytest.mark.usefixtures("session")
async def test_a_turn_end_is_one_fenced_statement_and_ends_a_turn_once(
    store: PostgresStore, tmp_path: Path, database_url: str
) -> None:
    """The turn's end (every turn's path): one round trip; an ended turn is not ended twice
    (``RecordNotFound``)."""
    lease = await _owned(store, tmp_path / "a", "a")
    await _started(store, lease)
    pool = await create_pool(database_url, min_size=1, max_size=1)
    try:
        storage = PostgresSessionStorage(pool, SID, lease)
        queries: list[str] = []
        (holder,) = pool._holders
        assert holder._con is not None
        holder._con.add_query_logger(lambda logged: queries.append(logged.query))
        await storage.finish_turn(TURN, TurnClosing(status=TurnStatus.COMPLETED))
        await asyncio.sleep(0)  # asyncpg calls the loggers with call_soon
        assert len(queries) == 1, queries
        with pytest.raises(RecordNotFound):
            await storage.finish_turn(TURN, TurnClosing(status=TurnStatus.FAILED))
    finally:
        await pool.close()
    assert (await store.get_turn(SID, TURN)).status is TurnStatus.COMPLETED


@pytest.mark.usefixtures("session")
async def test_a_stale_owners_turn_end_is_refused_and_the_takeovers_interruption_stands(
    store: PostgresStore, tmp_path: Path
) -> None:
    """The takeover interrupted the turn; the old owner's ``completed`` does not overwrite it."""
    storage = await _started(store, await _owned(store, tmp_path / "a", "a"))
    await _expire(store)
    await _owned(store, tmp_path / "b", "b")
    with pytest.raises(LeaseLost, match="no longer owns"):
        await storage.finish_turn(TURN, TurnClosing(status=TurnStatus.COMPLETED))
    assert (await store.get_turn(SID, TURN)).status is TurnStatus.INTERRUPTED
