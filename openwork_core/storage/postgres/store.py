"""PostgresStore: the one object the runtime talks to for durable facts. Each method is one
transaction; nothing here keeps state besides the pool."""

from __future__ import annotations

import asyncpg

from openwork_core.ids import ClientRequestId, SessionId, TurnId
from openwork_core.storage.postgres import messages as message_rows
from openwork_core.storage.postgres import providers as provider_rows
from openwork_core.storage.postgres import sessions as session_rows
from openwork_core.storage.postgres import turns as turn_rows
from openwork_core.storage.postgres.turn_warnings import fetch_turn_warnings
from openwork_core.storage.records import (
    ProviderRecord,
    SessionRecord,
    StoredMessage,
    TurnRecord,
    TurnWarningRecord,
)
from openwork_tools.modes import SandboxMode


class PostgresStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    @property
    def pool(self) -> asyncpg.Pool:
        return self._pool

    async def ping(self) -> None:
        async with self._pool.acquire() as conn:
            await conn.fetchval("SELECT 1")

    # -- sessions ----------------------------------------------------------------------------
    async def create_session(
        self,
        *,
        session_id: SessionId,
        working_directory: str,
        agent: str,
        provider_id: str | None,
        model_name: str | None,
        sandbox_mode: SandboxMode,
    ) -> SessionRecord:
        async with self._pool.acquire() as conn:
            return await session_rows.insert_session(
                conn,
                session_id=session_id,
                working_directory=working_directory,
                agent=agent,
                provider_id=provider_id,
                model_name=model_name,
                sandbox_mode=sandbox_mode,
            )

    async def get_session(self, session_id: SessionId) -> SessionRecord:
        async with self._pool.acquire() as conn:
            return await session_rows.fetch_session(conn, session_id)

    async def list_sessions(self) -> list[SessionRecord]:
        async with self._pool.acquire() as conn:
            return await session_rows.list_root_sessions(conn)

    async def set_sandbox_mode(self, session_id: SessionId, mode: SandboxMode) -> SessionRecord:
        async with self._pool.acquire() as conn:
            return await session_rows.update_sandbox_mode(conn, session_id, mode)

    # -- turns -------------------------------------------------------------------------------
    async def get_turn(self, session_id: SessionId, turn_id: TurnId) -> TurnRecord:
        async with self._pool.acquire() as conn:
            return await turn_rows.fetch_turn(conn, session_id, turn_id)

    async def turn_warnings(self, turn_id: TurnId) -> list[TurnWarningRecord]:
        async with self._pool.acquire() as conn:
            return await fetch_turn_warnings(conn, turn_id)

    async def get_turn_by_client_request(
        self, session_id: SessionId, client_request_id: ClientRequestId
    ) -> TurnRecord | None:
        async with self._pool.acquire() as conn:
            return await turn_rows.fetch_turn_by_client_request(conn, session_id, client_request_id)

    async def get_running_turn(self, session_id: SessionId) -> TurnRecord | None:
        async with self._pool.acquire() as conn:
            return await turn_rows.fetch_running_turn(conn, session_id)

    # -- messages ----------------------------------------------------------------------------
    async def list_messages(
        self, session_id: SessionId, *, after_sequence: int, limit: int
    ) -> list[StoredMessage]:
        async with self._pool.acquire() as conn:
            return await message_rows.fetch_session_messages(
                conn, session_id, after_sequence=after_sequence, limit=limit
            )

    async def last_assistant_content(self, turn_id: TurnId) -> str | None:
        async with self._pool.acquire() as conn:
            return await message_rows.fetch_last_assistant_text(conn, turn_id)

    # -- providers ---------------------------------------------------------------------------
    async def upsert_provider(self, provider: ProviderRecord) -> ProviderRecord:
        async with self._pool.acquire() as conn:
            return await provider_rows.upsert_provider(conn, provider)

    async def get_provider(self, provider_id: str) -> ProviderRecord:
        async with self._pool.acquire() as conn:
            return await provider_rows.fetch_provider(conn, provider_id)

    async def list_providers(self) -> list[ProviderRecord]:
        async with self._pool.acquire() as conn:
            return await provider_rows.list_providers(conn)
