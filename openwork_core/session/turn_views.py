"""What ``GET …/turns/{tid}`` answers (daemon-api.md): the row, or the live actor's view of a Turn
that is running or whose row could not be written (DESIGN.md §2: a Turn exists from acceptance)."""

from __future__ import annotations

from dataclasses import dataclass

from openwork_core.session.handle import SessionHandle
from openwork_core.session.snapshot import TerminalRuntime
from openwork_core.storage import PostgresStore, RecordNotFound
from openwork_core.storage.codec import content_text
from openwork_core.storage.records import TurnRecord, TurnStatus


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnView:
    turn_id: str
    status: TurnStatus
    error_code: str | None
    message: str | None
    final_text: str | None
    model_calls: int


async def read_turn_view(
    store: PostgresStore, handle: SessionHandle | None, session_id: str, turn_id: str
) -> TurnView:
    """A turn exists from acceptance: running before the runner has written its row."""
    if handle is not None and await handle.active_turn_id() == turn_id:
        try:
            row = await store.get_turn(session_id, turn_id)
            calls = row.model_call_count
        except RecordNotFound:
            calls = 0
        return TurnView(
            turn_id=turn_id,
            status=TurnStatus.RUNNING,
            error_code=None,
            message=None,
            final_text=None,
            model_calls=calls,
        )
    try:
        row = await store.get_turn(session_id, turn_id)
    except RecordNotFound:
        remembered = None if handle is None else await _terminal_in_memory(handle, turn_id)
        if remembered is None:
            raise
        return remembered
    return await _view_of(store, row)


async def _terminal_in_memory(handle: SessionHandle, turn_id: str) -> TurnView | None:
    """A turn whose row could not be written still has its outcome in the actor's snapshot."""
    runtime = (await handle.snapshot()).runtime
    if not isinstance(runtime, TerminalRuntime) or runtime.turnId != turn_id:
        return None
    outcome = runtime.outcome
    assert isinstance(outcome, dict)
    status = TurnStatus(str(outcome["status"]))
    code = outcome.get("code")
    message = outcome.get("message")
    final = outcome.get("finalText")
    return TurnView(
        turn_id=turn_id,
        status=status,
        error_code=None if code is None else str(code),
        message=None if message is None else str(message),
        final_text=None if final is None else str(final),
        model_calls=0,
    )


async def _view_of(store: PostgresStore, row: TurnRecord) -> TurnView:
    final_text: str | None = None
    if row.status is TurnStatus.COMPLETED:
        content = await store.last_assistant_content(row.id)
        final_text = None if content is None else content_text(content)
    return TurnView(
        turn_id=row.id,
        status=row.status,
        error_code=row.error_code,
        message=row.error_message,
        final_text=final_text,
        model_calls=row.model_call_count,
    )
