"""``DesktopQueries``: the desktop app's reads and the session lifecycle (issue 16), delegated to
by ``OpenWorkCore``. Reads never load a session's actor: rows from the database, plus the live
handle's active Turn when the session happens to be loaded."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol

import asyncpg

from openwork_core.desktop.cursor import session_cursor, turn_cursor
from openwork_core.desktop.titles import derived_title, preview
from openwork_core.desktop.views import (
    ChildSession,
    SessionPage,
    SessionSummary,
    TurnPage,
    TurnSummary,
)
from openwork_core.ids import SessionId, TurnId
from openwork_core.session.errors import SessionActive, SessionError
from openwork_core.session.trace import TraceRecorder
from openwork_core.session.updates import StreamEndReason, UsageBody
from openwork_core.storage.codec import content_text
from openwork_core.storage.desktop_records import (
    CompactionRow,
    PlanRow,
    SessionActivity,
    SessionFilter,
    SessionKey,
    SessionPatch,
    SessionSummaryRow,
    SpanRow,
    TurnHistoryRow,
)
from openwork_core.storage.postgres import history as history_rows
from openwork_core.storage.postgres import session_listing as listing_rows
from openwork_core.storage.records import TurnStatus

if TYPE_CHECKING:
    from openwork_core.session.compaction.run import CompactionResult
    from openwork_core.session.handle import SessionHandle


class SubAgentNotDeletable(SessionError):
    """A sub-agent goes with its root session (multi-agent.md §2: the root owns its children)."""

    code = "sub_agent_not_deletable"
    http_status: ClassVar[int] = 409

    def __init__(self, session_id: SessionId) -> None:
        super().__init__(f"session {session_id} is a sub-agent; delete its root session instead")


class LoadedSessions(Protocol):
    """What the session registry lends: its loaded handles, never loading one."""

    def get(self, session_id: SessionId) -> SessionHandle | None: ...

    async def close(self, session_id: SessionId, reason: StreamEndReason) -> None: ...

    def forget(self, root_session_id: SessionId) -> None: ...


def _final_text(content: str | None) -> str | None:
    return None if content is None else content_text(content)


def _turn_summary(row: TurnHistoryRow) -> TurnSummary:
    return TurnSummary(
        turn_id=row.turn_id,
        sequence=row.sequence,
        status=row.status,
        error_code=row.error_code,
        started_at=row.started_at,
        finished_at=row.finished_at,
        model_calls=row.model_calls,
        usage=UsageBody.of(row.usage),
        final_text_preview=preview(_final_text(row.last_assistant_content))
        if row.status is TurnStatus.COMPLETED
        else None,
    )


class DesktopQueries:
    def __init__(
        self, pool: asyncpg.Pool, home: Path, registry: LoadedSessions, trace: TraceRecorder
    ) -> None:
        self._pool = pool
        self._spill_root = home / "spill"
        self._registry = registry
        self._trace = trace

    async def _active_turn(
        self, session_id: SessionId, stored_running: TurnId | None
    ) -> TurnId | None:
        """The running Turn: the live handle's (visible from acceptance), else the stored row's."""
        handle = self._registry.get(session_id)
        if handle is not None:
            live = await handle.active_turn_id()
            if live is not None:
                return live
        return stored_running

    async def _summary(self, row: SessionSummaryRow) -> SessionSummary:
        active = await self._active_turn(row.id, row.running_turn_id)
        derived = row.title is None
        return SessionSummary(
            session_id=row.id,
            workspace=row.working_directory,
            agent=row.agent,
            provider=row.provider_id,
            model=row.model_name,
            permission_mode=row.sandbox_mode,
            created_at=row.created_at,
            parent_session_id=row.parent_session_id,
            title=derived_title(_final_text(row.first_user_content)) if derived else row.title,
            title_is_derived=derived,
            archived=row.archived,
            status=SessionActivity.IDLE if active is None else SessionActivity.RUNNING,
            active_turn_id=active,
            turn_count=row.turn_count,
            last_activity_at=row.last_activity_at,
        )

    # -- sessions ------------------------------------------------------------------------------
    async def list_sessions(self, query: SessionFilter) -> SessionPage:
        async with self._pool.acquire() as conn:
            rows = await listing_rows.list_root_summaries(
                conn,
                SessionFilter(
                    workspace=query.workspace,
                    archived=query.archived,
                    after=query.after,
                    limit=None if query.limit is None else query.limit + 1,
                ),
            )
        page = rows[: query.limit]
        more = query.limit is not None and len(rows) > query.limit
        last = page[-1] if page else None
        return SessionPage(
            sessions=tuple([await self._summary(r) for r in page]),
            next_cursor=session_cursor(SessionKey(created_at=last.created_at, session_id=last.id))
            if more and last is not None
            else None,
        )

    async def session(self, session_id: SessionId) -> SessionSummary:
        async with self._pool.acquire() as conn:
            return await self._summary(await listing_rows.fetch_summary(conn, session_id))

    async def update_session(self, session_id: SessionId, patch: SessionPatch) -> SessionSummary:
        async with self._pool.acquire() as conn:
            await listing_rows.patch_session(conn, session_id, patch)
            return await self._summary(await listing_rows.fetch_summary(conn, session_id))

    async def delete_session(self, session_id: SessionId) -> tuple[SessionId, ...]:
        """Refused while a Turn of the session or a sub-agent runs (an approval pending is a
        running Turn); rows removed in one transaction; actors stopped and spill files removed
        after the commit. Returns the removed session ids, root first."""
        async with self._pool.acquire() as conn:
            row = await listing_rows.fetch_summary(conn, session_id)
            if row.parent_session_id is not None:
                raise SubAgentNotDeletable(session_id)
            tree = await listing_rows.session_tree_ids(conn, session_id)
            for member in tree:
                handle = self._registry.get(member)
                active = None if handle is None else await handle.active_turn_id()
                if active is not None:
                    raise SessionActive(active)
            try:
                removed = await listing_rows.delete_session_tree(conn, session_id)
            except listing_rows.SessionTreeRunning as exc:
                raise SessionActive(exc.turn_id) from exc
        for member in removed:
            await self._registry.close(member, StreamEndReason.DELETED)
        self._registry.forget(session_id)
        await asyncio.to_thread(self._remove_spill, removed)
        return removed

    def _remove_spill(self, session_ids: Sequence[SessionId]) -> None:
        for member in session_ids:
            directory = self._spill_root / member
            if directory.is_dir() and not directory.is_symlink():
                shutil.rmtree(directory, ignore_errors=True)

    # -- history -------------------------------------------------------------------------------
    async def turns(
        self, session_id: SessionId, before_sequence: int | None, limit: int
    ) -> TurnPage:
        async with self._pool.acquire() as conn:
            await history_rows.require_session(conn, session_id)
            rows = await history_rows.fetch_turn_page(conn, session_id, before_sequence, limit + 1)
        page = rows[:limit]
        return TurnPage(
            turns=tuple(_turn_summary(r) for r in page),
            next_cursor=turn_cursor(page[-1].sequence) if len(rows) > limit and page else None,
        )

    async def turn(self, session_id: SessionId, turn_id: TurnId) -> TurnSummary | None:
        """The stored Turn's timing and usage; ``None`` before the runner wrote its row."""
        async with self._pool.acquire() as conn:
            row = await history_rows.fetch_turn_history(conn, session_id, turn_id)
        return None if row is None else _turn_summary(row)

    async def compactions(self, session_id: SessionId) -> list[CompactionRow]:
        async with self._pool.acquire() as conn:
            await history_rows.require_session(conn, session_id)
            return await history_rows.fetch_compactions(conn, session_id)

    async def record_compaction_tokens(
        self, session_id: SessionId, result: CompactionResult
    ) -> None:
        """A checkpoint's Conversation tokens before and after, as the compaction measured them."""
        async with self._pool.acquire() as conn:
            await history_rows.record_compaction_tokens(
                conn, session_id, result.compaction_id, result.before_tokens, result.after_tokens
            )

    async def plan(self, session_id: SessionId) -> PlanRow | None:
        async with self._pool.acquire() as conn:
            await history_rows.require_session(conn, session_id)
            return await history_rows.fetch_latest_plan(conn, session_id)

    async def children(self, session_id: SessionId) -> list[ChildSession]:
        async with self._pool.acquire() as conn:
            await history_rows.require_session(conn, session_id)
            rows = await history_rows.fetch_children(conn, session_id)
        out: list[ChildSession] = []
        for r in rows:
            active = await self._active_turn(r.session_id, r.running_turn_id)
            out.append(
                ChildSession(
                    session_id=r.session_id,
                    task_name=r.task_name,
                    agent_role=r.agent_role,
                    status=SessionActivity.IDLE if active is None else SessionActivity.RUNNING,
                    active_turn_id=active,
                    last_turn_status=r.last_turn_status,
                    turn_count=r.turn_count,
                    created_at=r.created_at,
                    last_activity_at=r.last_activity_at,
                )
            )
        return out

    async def trace(self, session_id: SessionId, turn_id: TurnId) -> list[SpanRow]:
        """The turn's spans, after the trace writer wrote what was queued before this read (a
        flush ends its batch window early), so a span recorded before the request is listed."""
        await self._trace.flushed()
        async with self._pool.acquire() as conn:
            await history_rows.require_session(conn, session_id)
            await history_rows.require_turn(conn, session_id, turn_id)
            return await history_rows.fetch_turn_spans(conn, session_id, turn_id)
