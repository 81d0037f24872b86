"""``turn_warnings`` rows (migration 0011; issue 24 point 4): one per code per turn, inserted as
the turn raises the warning (a second one of the same code is dropped), read back in the order
they were raised."""

from __future__ import annotations

from openwork_core.ids import TurnId
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.records import TurnWarningRecord


async def insert_turn_warning(conn: Conn, turn_id: TurnId, warning: TurnWarningRecord) -> None:
    await conn.execute(
        """INSERT INTO turn_warnings (turn_id, code, message, model_call)
           VALUES ($1, $2, $3, $4) ON CONFLICT (turn_id, code) DO NOTHING""",
        turn_id,
        warning.code,
        warning.message,
        warning.model_call,
    )


async def fetch_turn_warnings(conn: Conn, turn_id: TurnId) -> list[TurnWarningRecord]:
    rows = await conn.fetch(
        """SELECT code, message, model_call FROM turn_warnings WHERE turn_id = $1
           ORDER BY created_at, code""",
        turn_id,
    )
    return [
        TurnWarningRecord(code=r["code"], message=r["message"], model_call=r["model_call"])
        for r in rows
    ]
