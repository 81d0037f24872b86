"""The ``turn_plans`` table (update-plan.md §5): one row per Turn holding its latest plan.

The runner writes it through ``PostgresSessionStorage.append`` (a ``StepWrite`` with a plan): the
Turn locked, the plan replaced and the ``Plan updated`` tool result appended in one transaction.
``GET /v1/sessions/{sid}/plan`` reads it back with ``history.fetch_latest_plan``."""

from __future__ import annotations

from openwork_core.ids import SessionId, TurnId
from openwork_core.plan.model import TurnPlan, steps_to_json
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.postgres.connection import Conn


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
