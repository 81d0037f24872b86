"""In-memory sessions and their sub-agent topology: the ``ChildSessionStorage`` port a root's
sub-agent host uses (multi-agent.md §2, §5, §8), with the same contract as PostgreSQL
(``AgentStore``): depth 1, a task name unique per parent and of the stored format, turnless
children deleted by reconciliation, the agent messages a terminal child turn still owes. Each
session's own facts are its ``InMemorySessionStorage`` (``storage``). Not durable, one process."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime

from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import Role
from openwork_core.agents.control import is_valid_task_name
from openwork_core.agents.reconcile import (
    ChildTurn,
    Reconciliation,
    TurnlessChild,
    plan_reconciliation,
)
from openwork_core.ids import SessionId, SpanId, new_session_id
from openwork_core.storage.agent_records import (
    ChildSessionRecord,
    ChildSessionRejected,
    ChildTaskNameTaken,
)
from openwork_core.storage.codec import content_text
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.memory import InMemorySessionStorage
from openwork_core.storage.records import SessionRecord, TurnRecord, TurnStatus
from openwork_tools.modes import SandboxMode


@dataclass(frozen=True, slots=True, kw_only=True)
class _Topology:
    task_name: str
    agent_role: str
    spawn_span_id: SpanId | None


class InMemorySessions:
    """Every session of one in-memory daemon: the records, each session's storage and the
    children's topology."""

    def __init__(self) -> None:
        self._records: dict[SessionId, SessionRecord] = {}
        self._storages: dict[SessionId, InMemorySessionStorage] = {}
        self._topology: dict[SessionId, _Topology] = {}

    def create_session(self, record: SessionRecord) -> InMemorySessionStorage:
        """A root session (``record.parent_session_id`` is ``None``) and its storage."""
        self._records[record.id] = record
        storage = InMemorySessionStorage(record.id, sandbox_mode=record.sandbox_mode)
        self._storages[record.id] = storage
        return storage

    def storage(self, session_id: SessionId) -> InMemorySessionStorage:
        try:
            return self._storages[session_id]
        except KeyError:
            raise RecordNotFound(f"unknown session: {session_id}") from None

    # -- ChildSessionStorage -----------------------------------------------------------------
    async def get_session(self, session_id: SessionId) -> SessionRecord:
        try:
            return self._records[session_id]
        except KeyError:
            raise RecordNotFound(f"unknown session: {session_id}") from None

    async def create_child_session(
        self,
        *,
        parent_session_id: SessionId,
        task_name: str,
        agent_role: str,
        working_directory: str,
        provider_id: str | None,
        model_name: str | None,
        sandbox_mode: SandboxMode,
        spawn_span_id: SpanId | None = None,
        session_id: SessionId | None = None,
    ) -> SessionRecord:
        parent = await self.get_session(parent_session_id)
        if parent.parent_session_id is not None:
            raise ChildSessionRejected(
                f"session {parent_session_id} is a sub-agent; it has no children"
            )
        if not is_valid_task_name(task_name):  # PostgreSQL's sessions_task_name_format
            raise ChildSessionRejected("child session violates sessions_task_name_format")
        if any(c.task_name == task_name for c in self._children(parent_session_id)):
            raise ChildTaskNameTaken(
                f"session {parent_session_id} already has a sub-agent named {task_name!r}"
            )
        child_id = session_id or new_session_id()
        if child_id in self._records:
            raise ChildSessionRejected(f"child session {child_id} already exists")
        now = datetime.now(UTC)
        record = SessionRecord(
            id=child_id,
            working_directory=working_directory,
            agent=agent_role,
            provider_id=provider_id,
            model_name=model_name,
            sandbox_mode=sandbox_mode,
            tool_result_pruned_through_sequence=None,
            parent_session_id=parent_session_id,
            created_at=now,
            updated_at=now,
        )
        self.create_session(record)
        self._topology[child_id] = _Topology(
            task_name=task_name, agent_role=agent_role, spawn_span_id=spawn_span_id
        )
        return record

    async def delete_turnless_children(
        self, parent_session_id: SessionId, *, keep: Collection[str] = ()
    ) -> list[TurnlessChild]:
        deleted = [
            TurnlessChild(child_session_id=c.id, task_name=c.task_name)
            for c in self._children(parent_session_id)
            if c.id not in keep and not self._storages[c.id].turns
        ]
        for child in deleted:
            del self._records[child.child_session_id]
            del self._storages[child.child_session_id]
            del self._topology[child.child_session_id]
        return deleted

    async def reconcile(
        self, parent_session_id: SessionId, *, live_child_ids: Collection[str] = ()
    ) -> Reconciliation:
        deleted = await self.delete_turnless_children(parent_session_id, keep=live_child_ids)
        parent = self.storage(parent_session_id)
        delivered = frozenset(m.id for m in parent.messages if m.kind is MessageKind.AGENT_MESSAGE)
        return plan_reconciliation(
            delivered_ids=delivered,
            child_turns=self._terminal_turns(parent_session_id),
            turnless_children=deleted,
        )

    async def latest_turns(self, session_ids: Collection[str]) -> dict[str, TurnRecord]:
        latest: dict[str, TurnRecord] = {}
        for session_id in map(SessionId, session_ids):
            storage = self._storages.get(session_id)
            if storage is not None and storage.turns:
                latest[session_id] = list(storage.turns.values())[-1].record(session_id)
        return latest

    async def list_children(self, parent_session_id: SessionId) -> list[ChildSessionRecord]:
        return self._children(parent_session_id)

    # -- reads -------------------------------------------------------------------------------
    def _children(self, parent_session_id: SessionId) -> list[ChildSessionRecord]:
        children = [
            ChildSessionRecord(
                session=record,
                task_name=self._topology[record.id].task_name,
                agent_role=self._topology[record.id].agent_role,
                spawn_span_id=self._topology[record.id].spawn_span_id,
            )
            for record in self._records.values()
            if record.parent_session_id == parent_session_id
        ]
        return sorted(children, key=lambda c: c.task_name)

    def _terminal_turns(self, parent_session_id: SessionId) -> list[ChildTurn]:
        """Every terminal turn of every child, by task name then turn order, with the text of
        the turn's last assistant message."""
        found: list[ChildTurn] = []
        for child in self._children(parent_session_id):
            storage = self._storages[child.id]
            for turn in storage.turns.values():
                if turn.status is TurnStatus.RUNNING:
                    continue
                last = [
                    m for m in storage.messages if m.turn_id == turn.id and m.role is Role.ASSISTANT
                ]
                found.append(
                    ChildTurn(
                        child_session_id=child.id,
                        task_name=child.task_name,
                        turn_id=turn.id,
                        status=turn.status,
                        error_code=turn.error_code,
                        error_message=turn.error_message,
                        last_assistant_text=content_text(last[-1].content) if last else None,
                    )
                )
        return found


__all__ = ["InMemorySessions"]
