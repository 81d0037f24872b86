"""The ``turns`` table: the row, its counters, its terminal state, the restart correction."""

from __future__ import annotations

import asyncpg

from openwork_core.ids import ClientRequestId, SessionId, TurnId
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.postgres.steady_statements import steady
from openwork_core.storage.records import TurnRecord, TurnStatus

RESTART_ERROR_CODE = "process_restart"
RESTART_ERROR_MESSAGE = "the daemon restarted while this turn was running"

_COLUMNS = """id, session_id, client_request_id, sequence, status, resolved_provider_id,
    resolved_model_name, model_call_count, model_submission_count, tool_call_count,
    input_tokens, output_tokens, error_code, error_message, started_at, ended_at"""


INSERT_TURN = steady(f"""INSERT INTO turns (id, session_id, client_request_id, sequence, model_id,
                       resolved_provider_id, resolved_model_name, app_version)
    VALUES ($1, $2, $3, (SELECT COALESCE(MAX(sequence), 0) + 1 FROM turns WHERE session_id = $2),
            $4 || '/' || $5, $4, $5, $6)
    RETURNING {_COLUMNS}""")
TOUCH_SESSION = steady("UPDATE sessions SET last_turn_at = now(), updated_at = now() WHERE id = $1")
TURN_BY_CLIENT_REQUEST = steady(
    f"SELECT {_COLUMNS} FROM turns WHERE session_id = $1 AND client_request_id = $2"
)


def _row(row: asyncpg.Record) -> TurnRecord:
    return TurnRecord(
        id=row["id"],
        session_id=row["session_id"],
        client_request_id=row["client_request_id"],
        sequence=row["sequence"],
        status=TurnStatus(row["status"]),
        resolved_provider_id=row["resolved_provider_id"],
        resolved_model_name=row["resolved_model_name"],
        model_call_count=row["model_call_count"],
        model_submission_count=row["model_submission_count"],
        tool_call_count=row["tool_call_count"],
        input_tokens=row["input_tokens"],
        output_tokens=row["output_tokens"],
        error_code=row["error_code"],
        error_message=row["error_message"],
        started_at=row["started_at"],
        ended_at=row["ended_at"],
    )


async def insert_turn(
    conn: Conn,
    *,
    turn_id: TurnId,
    session_id: SessionId,
    client_request_id: ClientRequestId,
    provider_id: str,
    model_name: str,
    app_version: str,
) -> TurnRecord:
    """Insert a running turn with the next per-session sequence (caller holds the session lock)."""
    row = await conn.fetchrow(
        INSERT_TURN,
        turn_id,
        session_id,
        client_request_id,
        provider_id,
        model_name,
        app_version,
    )
    assert row is not None
    await conn.execute(TOUCH_SESSION, session_id)
    return _row(row)


async def fetch_turn(conn: Conn, session_id: SessionId, turn_id: TurnId) -> TurnRecord:
    row = await conn.fetchrow(
        f"SELECT {_COLUMNS} FROM turns WHERE id = $1 AND session_id = $2", turn_id, session_id
    )
    if row is None:
        raise RecordNotFound(f"unknown turn: {turn_id}")
    return _row(row)


async def fetch_turn_by_client_request(
    conn: Conn, session_id: SessionId, client_request_id: ClientRequestId
) -> TurnRecord | None:
    row = await conn.fetchrow(
        TURN_BY_CLIENT_REQUEST,
        session_id,
        client_request_id,
    )
    return None if row is None else _row(row)


async def fetch_running_turn(conn: Conn, session_id: SessionId) -> TurnRecord | None:
    row = await conn.fetchrow(
        f"SELECT {_COLUMNS} FROM turns WHERE session_id = $1 AND status = 'running'", session_id
    )
    return None if row is None else _row(row)


_TOKEN_COLUMNS = (
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "reasoning_tokens",
    "cache_write_tokens",
)


def add_tokens(*params: int) -> str:
    """``SET`` items adding a response's token counts, in ``_TOKEN_COLUMNS`` order, to the turn's:
    each ``$n`` a ``bigint`` or NULL (not reported: the column is left as it is)."""
    return ", ".join(
        f"{column} = CASE WHEN ${n}::bigint IS NULL THEN {column}"
        f" ELSE COALESCE({column}, 0) + ${n} END"
        for column, n in zip(_TOKEN_COLUMNS, params, strict=True)
    )


async def finish_turn(
    conn: Conn,
    turn_id: TurnId,
    status: TurnStatus,
    *,
    error_code: str | None = None,
    error_message: str | None = None,
    plan_unfinished_step_count: int | None = None,
    model_call_count: int | None = None,
    model_submission_count: int | None = None,
) -> None:
    """``model_call_count`` / ``model_submission_count``: the runner's exact counts (``None``
    keeps the stored ones)."""
    result = await conn.execute(
        """UPDATE turns SET status = $2, error_code = $3, error_message = $4,
                            plan_unfinished_step_count = $5,
                            model_call_count = COALESCE($6, model_call_count),
                            model_submission_count = COALESCE($7, model_submission_count),
                            ended_at = GREATEST(now(), started_at), updated_at = now()
           WHERE id = $1 AND status = 'running'""",
        turn_id,
        status.value,
        error_code,
        error_message,
        plan_unfinished_step_count,
        model_call_count,
        model_submission_count,
    )
    if result != "UPDATE 1":
        raise RecordNotFound(f"no running turn to finish: {turn_id}")
