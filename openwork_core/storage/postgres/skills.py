"""The ``skill_status`` table (skills.md §6)."""

from __future__ import annotations

import asyncpg


class SkillStatusStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def disabled_names(self) -> frozenset[str]:
        async with self._pool.acquire() as conn:
            rows = await conn.fetch("SELECT name FROM skill_status WHERE disabled")
        return frozenset(str(r["name"]) for r in rows)

    async def set_disabled(self, name: str, disabled: bool) -> None:
        """Upsert; an explicit ``false`` is kept as a row."""
        async with self._pool.acquire() as conn:
            await conn.execute(
                """INSERT INTO skill_status (name, disabled) VALUES ($1, $2)
                   ON CONFLICT (name) DO UPDATE SET disabled = EXCLUDED.disabled""",
                name,
                disabled,
            )
