"""PostgresStore: the one object the runtime talks to for durable facts. Each method is one
transaction; nothing here keeps state besides the pool."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from openwork_core.ids import ClientRequestId, SessionId, TurnId
from openwork_core.storage.postgres import messages as message_rows
from openwork_core.storage.postgres import providers as provider_rows
from openwork_core.storage.postgres import sessions as session_rows
from openwork_core.storage.postgres import traces as trace_rows
from openwork_core.storage.postgres import turns as turn_rows
from openwork_core.storage.postgres.sessions import lock_session
from openwork_core.storage.postgres.turn_warnings import fetch_turn_warnings
from openwork_core.storage.records import (
    NewMessage,
    ProviderRecord,
    SessionRecord,
    StoredMessage,
    TurnRecord,
    TurnStatus,
    TurnWarningRecord,
)
from openwork_core.usage import TokenUsage
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
    async def start_turn(
        self,
        *,
        session_id: SessionId,
        turn_id: TurnId,
        client_request_id: ClientRequestId,
        provider_id: str,
        model_name: str,
        app_version: str,
        messages: Sequence[NewMessage],
    ) -> tuple[TurnRecord, list[StoredMessage]]:
        """The turn row and its user messages in one transaction (storage.md §3)."""
        async with self._pool.acquire() as conn, conn.transaction():
            await lock_session(conn, session_id)
            turn = await turn_rows.insert_turn(
                conn,
                turn_id=turn_id,
                session_id=session_id,
                client_request_id=client_request_id,
                provider_id=provider_id,
                model_name=model_name,
                app_version=app_version,
            )
            stored = await message_rows.insert_messages(conn, session_id, turn_id, messages)
            return turn, stored

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

    async def record_submission(self, turn_id: TurnId, model_call_index: int) -> None:
        async with self._pool.acquire() as conn:
            await turn_rows.record_submission(conn, turn_id, model_call_index)

    async def finish_turn(
        self,
        turn_id: TurnId,
        status: TurnStatus,
        *,
        error_code: str | None = None,
        error_message: str | None = None,
        plan_unfinished_step_count: int | None = None,
    ) -> None:
        async with self._pool.acquire() as conn:
            await turn_rows.finish_turn(
                conn,
                turn_id,
                status,
                error_code=error_code,
                error_message=error_message,
                plan_unfinished_step_count=plan_unfinished_step_count,
            )

    async def mark_running_interrupted(self) -> int:
        """Restart correction in one transaction: running turns → interrupted, running spans →
        outcome_unknown, both with ``process_restart`` (session-runtime.md §10)."""
        async with self._pool.acquire() as conn, conn.transaction():
            await trace_rows.mark_running_spans_unknown(conn, turn_rows.RESTART_ERROR_CODE)
            return await turn_rows.mark_running_interrupted(conn)

    # -- messages ----------------------------------------------------------------------------
    async def append_messages(
        self, session_id: SessionId, turn_id: TurnId, messages: Sequence[NewMessage]
    ) -> list[StoredMessage]:
        async with self._pool.acquire() as conn, conn.transaction():
            return await message_rows.insert_messages(conn, session_id, turn_id, messages)

    async def append_assistant(
        self,
        session_id: SessionId,
        turn_id: TurnId,
        message: NewMessage,
        *,
        usage: TokenUsage,
        tool_calls: int,
    ) -> StoredMessage:
        """The completed response and the turn's token and tool-call counters, together."""
        async with self._pool.acquire() as conn, conn.transaction():
            (stored,) = await message_rows.insert_messages(conn, session_id, turn_id, (message,))
            await turn_rows.add_response_counters(conn, turn_id, usage, tool_calls)
            return stored

    async def load_session_messages(self, session_id: SessionId) -> list[StoredMessage]:
        async with self._pool.acquire() as conn:
            return await message_rows.fetch_session_messages(conn, session_id)

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
