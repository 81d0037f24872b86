"""The ``turn_plans`` table (update-plan.md §5): one row per Turn holding its latest plan.

``commit_plan_update`` is the only writer: the plan and the ``Plan updated`` tool result are
committed together or not at all. ``PlanStore`` is the small facade the runtime holds beside
``PostgresStore``."""

from __future__ import annotations

import asyncpg

from openwork_chat_state.messages import CONTENT_BLOCKS, Role, ToolResultBlock
from openwork_core.ids import SessionId, TurnId
from openwork_core.plan import TurnPlan, steps_from_json, steps_to_json
from openwork_core.storage.errors import InvalidPlanCommit, RecordNotFound
from openwork_core.storage.postgres import messages as message_rows
from openwork_core.storage.postgres.connection import Conn
from openwork_core.storage.postgres.sessions import lock_session
from openwork_core.storage.records import NewMessage, StoredMessage

_COLUMNS = "p.turn_id, p.explanation, p.steps::text AS steps, p.updated_at"


def _plan(row: asyncpg.Record) -> TurnPlan:
    return TurnPlan(
        turn_id=row["turn_id"],
        explanation=row["explanation"],
        steps=steps_from_json(row["steps"]),
        updated_at=row["updated_at"],
    )


def check_plan_commit(turn_id: TurnId, plan: TurnPlan, tool_message: NewMessage) -> None:
    """A tool message holding exactly one tool-result block, for the plan's own Turn."""
    if plan.turn_id != turn_id:
        raise InvalidPlanCommit(f"the plan belongs to turn {plan.turn_id}, not {turn_id}")
    if tool_message.role is not Role.TOOL:
        raise InvalidPlanCommit(
            f"the plan's result must be a tool message, not {tool_message.role}"
        )
    blocks = CONTENT_BLOCKS.validate_json(tool_message.content)
    results = sum(1 for b in blocks if isinstance(b, ToolResultBlock))
    if results != 1:
        raise InvalidPlanCommit(f"the plan's tool message holds {results} tool results, not 1")


async def lock_turn(conn: Conn, session_id: SessionId, turn_id: TurnId) -> None:
    """Row-lock the Turn for the rest of the transaction."""
    found = await conn.fetchval(
        "SELECT 1 FROM turns WHERE id = $1 AND session_id = $2 FOR UPDATE", turn_id, session_id
    )
    if found is None:
        raise RecordNotFound(f"unknown turn: {turn_id}")


async def upsert_turn_plan(conn: Conn, plan: TurnPlan) -> None:
    await conn.execute(
        """INSERT INTO turn_plans (turn_id, explanation, steps, updated_at)
           VALUES ($1, $2, $3::jsonb, $4)
           ON CONFLICT (turn_id) DO UPDATE
           SET explanation = EXCLUDED.explanation, steps = EXCLUDED.steps,
               updated_at = EXCLUDED.updated_at""",
        plan.turn_id,
        plan.explanation,
        steps_to_json(plan.steps),
        plan.updated_at,
    )


async def fetch_turn_plan(conn: Conn, turn_id: TurnId) -> TurnPlan | None:
    row = await conn.fetchrow(f"SELECT {_COLUMNS} FROM turn_plans p WHERE p.turn_id = $1", turn_id)
    return None if row is None else _plan(row)


async def fetch_session_turn_plans(conn: Conn, session_id: SessionId) -> list[TurnPlan]:
    """Every plan of the session's Turns, empty ones included, in Turn order."""
    rows = await conn.fetch(
        f"""SELECT {_COLUMNS} FROM turn_plans p JOIN turns t ON t.id = p.turn_id
            WHERE t.session_id = $1 ORDER BY t.sequence""",
        session_id,
    )
    return [_plan(r) for r in rows]


class PlanStore:
    """Plan persistence; each method is one transaction (or one statement)."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def commit_plan_update(
        self, session_id: SessionId, turn_id: TurnId, plan: TurnPlan, tool_message: NewMessage
    ) -> StoredMessage:
        """update-plan.md §4 step 7: in ONE transaction lock the Turn, replace its plan and
        append the success tool result with the next session sequence. On any failure nothing
        is written (the Turn then fails ``persistence_error``)."""
        check_plan_commit(turn_id, plan, tool_message)
        async with self._pool.acquire() as conn, conn.transaction():
            await lock_session(conn, session_id)  # the same lock order as every message write
            await lock_turn(conn, session_id, turn_id)
            await upsert_turn_plan(conn, plan)
            (stored,) = await message_rows.insert_messages(
                conn, session_id, turn_id, (tool_message,)
            )
            return stored

    async def load_turn_plan(self, turn_id: TurnId) -> TurnPlan | None:
        async with self._pool.acquire() as conn:
            return await fetch_turn_plan(conn, turn_id)

    async def load_session_turn_plans(self, session_id: SessionId) -> list[TurnPlan]:
        async with self._pool.acquire() as conn:
            return await fetch_session_turn_plans(conn, session_id)
