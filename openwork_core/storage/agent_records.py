"""Sub-agent facts as storage keeps them (multi-agent.md §3, §8): a child session with its
topology, and the refusals of a child row."""

from __future__ import annotations

from dataclasses import dataclass

from openwork_core.ids import SessionId, SpanId
from openwork_core.storage.errors import StorageError
from openwork_core.storage.records import SessionRecord


class ChildSessionRejected(StorageError):
    """The child row breaks a sessions constraint (format, topology, nesting)."""

    code = "child_session_rejected"


class ChildTaskNameTaken(ChildSessionRejected):
    """``uq_sessions_parent_task_name``: the parent already has a child with this task name."""

    code = "child_task_name_taken"


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildSessionRecord:
    """A child session with its topology columns (``SessionRecord`` does not carry them)."""

    session: SessionRecord
    task_name: str
    agent_role: str
    spawn_span_id: SpanId | None

    @property
    def id(self) -> SessionId:
        return self.session.id
