"""What ``GET …/turns/{tid}`` answers (daemon-api.md): the row, or the live actor's view of a Turn
that is running or whose row could not be written (DESIGN.md §2: a Turn exists from acceptance)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, assert_never

from openwork_core.ids import SessionId, TurnId
from openwork_core.session.outcome import Cancelled, Completed, Failed, TurnOutcome
from openwork_core.session.snapshot import TerminalRuntime
from openwork_core.storage.codec import content_text
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.records import TurnRecord, TurnStatus

if TYPE_CHECKING:
    from openwork_core.session.handle import SessionHandle


class TurnRows(Protocol):
    """The reads a turn's view needs (``PostgresStore`` has them)."""

    async def get_turn(self, session_id: SessionId, turn_id: TurnId) -> TurnRecord: ...

    async def last_assistant_content(self, turn_id: TurnId) -> str | None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnView:
    turn_id: TurnId
    status: TurnStatus
    error_code: str | None
    message: str | None
    final_text: str | None
    model_calls: int


async def read_turn_view(
    store: TurnRows, handle: SessionHandle | None, session_id: SessionId, turn_id: TurnId
) -> TurnView:
    """The turn as its row says, except what this daemon knows better: a turn it runs is
    ``running``; a turn that ended here while an outage kept its end out of the database shows
    its real outcome (GET turn, the snapshot and the stream agree)."""
    status = None if handle is None else await handle.status()
    if handle is not None and status is not None and status.active_turn_id == turn_id:
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
    if handle is not None and status is not None and status.unwritten_turn_id == turn_id:
        remembered = await _terminal_in_memory(handle, turn_id)
        if remembered is not None:
            return remembered
    return await _view_of(store, row)


async def _terminal_in_memory(handle: SessionHandle, turn_id: TurnId) -> TurnView | None:
    """A turn whose row could not be written still has its outcome in the actor's snapshot."""
    runtime = (await handle.snapshot()).runtime
    if not isinstance(runtime, TerminalRuntime) or runtime.turn_id != turn_id:
        return None
    status, code, message, final = _outcome_fields(runtime.outcome)
    return TurnView(
        turn_id=turn_id,
        status=status,
        error_code=code,
        message=message,
        final_text=final,
        model_calls=0,
    )


def _outcome_fields(outcome: TurnOutcome) -> tuple[TurnStatus, str | None, str | None, str | None]:
    """(status, error code, error message, final text) of a terminal outcome."""
    match outcome:
        case Completed(final_text=text):
            return TurnStatus.COMPLETED, None, None, text
        case Failed(code=code, message=message):
            return TurnStatus.FAILED, code.value, message, None
        case Cancelled():
            return TurnStatus.CANCELLED, None, None, None
        case _:
            assert_never(outcome)


async def _view_of(store: TurnRows, row: TurnRecord) -> TurnView:
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
