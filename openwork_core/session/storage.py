"""SessionStorage: the port through which one session's actor and runner keep their durable
facts (storage.md §2–§3; session-runtime.md §3 "persist, then advance").

Domain values in and out: a write takes the ``Message`` the runner already holds and returns the
``RealOrigin`` (id and sequence) the database gave it, so the runner builds its Conversation item
from its own value and never decodes its own rows. One port object is bound to one session; the
PostgreSQL implementation is ``openwork_core.storage.postgres.session_storage``, the in-memory
one (fast runner tests) ``openwork_core.storage.memory``. Compaction's reads and writes are the
``CompactionStorage`` part of the same port."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import JsonValue

from openwork_chat_state.item import ConversationItem, MessageKind, RealOrigin
from openwork_chat_state.messages import Message, Role
from openwork_core.agents.reconcile import Reconciliation, TurnlessChild
from openwork_core.ids import ClientRequestId, CompactionId, MessageId, SessionId, SpanId, TurnId
from openwork_core.plan.model import TurnPlan
from openwork_core.storage.agent_records import ChildSessionRecord
from openwork_core.storage.codec import decode_message, storable_json, storable_message
from openwork_core.storage.compaction_records import (
    CheckpointRecord,
    NewCheckpoint,
    ProjectionRows,
    SessionMessageContents,
    TranscriptPage,
)
from openwork_core.storage.errors import InvalidPlanCommit, RecordNotFound, StorageError
from openwork_core.storage.records import (
    ProviderModel,
    ProviderRecord,
    SessionRecord,
    StoredFileChange,
    StoredMessage,
    TurnRecord,
    TurnStatus,
    TurnWarningRecord,
)
from openwork_core.storage.usage_records import (
    ModelCallRecord,
    SessionUsageTotals,
    StoredModelCall,
)
from openwork_tools.modes import SandboxMode

__all__ = [
    "CheckpointRecord",
    "ChildSessionRecord",
    "ChildSessionStorage",
    "CompactionStorage",
    "FileChangeStorage",
    "ModelCallRecord",
    "OutgoingMessage",
    "ProviderModel",
    "ProviderRecord",
    "RecordNotFound",
    "SessionRecord",
    "SessionStorage",
    "SessionUsageTotals",
    "StepWrite",
    "StorageError",
    "StoredMessage",
    "StoredModelCall",
    "TranscriptPage",
    "TurnClosing",
    "TurnOpening",
    "TurnRecord",
    "TurnStatus",
    "committed",
    "committed_all",
    "decode_message",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class OutgoingMessage:
    """A message to persist under a fresh (or deterministic) id; ``artifacts`` are UI data kept
    inside its single tool-result block, never sent to the model."""

    id: MessageId
    message: Message
    kind: MessageKind = MessageKind.NORMAL
    artifacts: tuple[JsonValue, ...] = ()

    def __post_init__(self) -> None:
        # docs/reliability.md "NUL-safe storage": the row and the Chat State item (``committed``)
        # carry the same storable text, so the request is the same bytes after a reload
        object.__setattr__(self, "message", storable_message(self.message))
        object.__setattr__(self, "artifacts", tuple(storable_json(a) for a in self.artifacts))


def committed(outgoing: OutgoingMessage, origin: RealOrigin) -> ConversationItem:
    """The Conversation item of a message whose write returned ``origin``."""
    return ConversationItem(message=outgoing.message, kind=outgoing.kind, origin=origin)


def committed_all(
    outgoing: Sequence[OutgoingMessage], origins: Sequence[RealOrigin]
) -> list[ConversationItem]:
    if len(outgoing) != len(origins):
        raise ValueError("one origin per written message")
    return [committed(m, o) for m, o in zip(outgoing, origins, strict=True)]


@dataclass(frozen=True, slots=True, kw_only=True)
class StepWrite:
    """One write of a model step (storage.md §3; the runner's ``StepWriter``): ``messages`` in
    order, and with them, in the same transaction,

    - ``response``: the first message is this submission's completed response — its
      ``model_call_usage`` row, its tokens and tool calls added to the turn's counters; every
      message of such a step has a new id (a stored one fails the write whole);
    - ``plan``: the turn's plan replaced, ``messages`` being its one tool result
      (update-plan.md §4);
    - ``submission``: that model call counted before it goes out (``model_call_count`` at least
      it, ``model_submission_count`` one more).

    Without ``response`` an id already stored is not written again and its stored origin comes
    back (deterministic World State ids are idempotent)."""

    messages: tuple[OutgoingMessage, ...] = ()
    response: ModelCallRecord | None = None
    plan: TurnPlan | None = None
    submission: int | None = None

    def __post_init__(self) -> None:
        if self.response is not None and (
            not self.messages or self.messages[0].message.role is not Role.ASSISTANT
        ):
            raise ValueError("a response's step starts with its assistant message")
        if self.plan is not None and (
            len(self.messages) != 1
            or self.messages[0].message.role is not Role.TOOL
            or len(self.messages[0].message.tool_results) != 1
        ):
            raise InvalidPlanCommit("a plan is written with its one tool result, alone")

    def check_turn(self, turn_id: TurnId) -> None:
        """A plan is written by its own turn."""
        if self.plan is not None and self.plan.turn_id != turn_id:
            raise InvalidPlanCommit(f"the plan belongs to turn {self.plan.turn_id}, not {turn_id}")

    @property
    def tool_calls(self) -> int:
        """The response's tool calls (the turn's ``tool_call_count`` adds them)."""
        return 0 if self.response is None else len(self.messages[0].message.tool_calls)


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnOpening:
    """The turn row written with the user's input messages (storage.md §3)."""

    turn_id: TurnId
    client_request_id: ClientRequestId
    provider_id: str
    model_name: str
    app_version: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnClosing:
    """A turn's terminal state."""

    status: TurnStatus
    error_code: str | None = None
    error_message: str | None = None
    plan_unfinished_step_count: int | None = None
    model_call_count: int | None = None
    model_submission_count: int | None = None
    """The turn's exact counters as its runner counted them (``None`` keeps the stored ones): a
    submission counted ahead with the last write of a step (``StepWrite.submission``) that then
    never went out is taken back here."""


class CompactionStorage(Protocol):
    """Checkpoints, the projection read, the pruning watermark and transcript read-back
    (compaction.md §6, §8)."""

    async def insert_checkpoint(self, new: NewCheckpoint) -> CheckpointRecord: ...

    async def latest_checkpoint(self, session_id: SessionId) -> CheckpointRecord | None: ...

    async def get_checkpoint(
        self, session_id: SessionId, compaction_id: CompactionId
    ) -> CheckpointRecord: ...

    async def load_projection(self, session_id: SessionId) -> ProjectionRows: ...

    async def replayed_message(self, checkpoint: CheckpointRecord) -> StoredMessage | None: ...

    async def advance_watermark(self, session_id: SessionId, sequence: int) -> int: ...

    async def all_session_message_contents(
        self, session_id: SessionId
    ) -> SessionMessageContents: ...

    async def read_transcript(
        self,
        session_id: SessionId,
        compaction_id: CompactionId | None = None,
        after_sequence: int = 0,
        limit: int = 20,
    ) -> TranscriptPage: ...


class FileChangeStorage(Protocol):
    """``file_change`` artifacts in stored tool results and their ``undone`` flag (tools.md §8)."""

    async def find(
        self, session_id: SessionId, change_ids: Sequence[str]
    ) -> list[StoredFileChange]: ...

    async def set_undone(self, session_id: SessionId, undone: Mapping[str, bool]) -> None: ...


class SessionStorage(Protocol):
    """One session's durable facts. Every write is one transaction; on failure nothing of it is
    written and the caller's in-memory state stays where it was."""

    @property
    def session_id(self) -> str: ...

    @property
    def compactions(self) -> CompactionStorage: ...

    @property
    def file_changes(self) -> FileChangeStorage: ...

    async def start_turn(
        self, opening: TurnOpening, messages: Sequence[OutgoingMessage]
    ) -> tuple[RealOrigin, ...]:
        """The turn row and the user's input messages together."""
        ...

    async def append(self, turn_id: TurnId, step: StepWrite) -> tuple[RealOrigin, ...]:
        """One write of a model step (``StepWrite``), one transaction: the origins of its
        messages in order, numbered with the session's next sequences."""
        ...

    async def last_model_call(self) -> StoredModelCall | None:
        """The session's newest recorded submission."""
        ...

    async def turn_model_calls(self, turn_id: TurnId) -> list[StoredModelCall]:
        """A turn's recorded submissions in order."""
        ...

    async def usage_totals(self) -> SessionUsageTotals:
        """Every recorded submission of the session, summed."""
        ...

    async def append_agent_messages(
        self, turn_id: TurnId, messages: Sequence[OutgoingMessage]
    ) -> tuple[RealOrigin | None, ...]:
        """One mailbox drain (multi-agent.md §6): each with ``ON CONFLICT (id) DO NOTHING``;
        ``None`` for an id already stored (that message is dropped)."""
        ...

    async def record_turn_warning(self, turn_id: TurnId, warning: TurnWarningRecord) -> None:
        """Issue 24: the turn's warning of that code, unless it has one already."""
        ...

    async def finish_turn(self, turn_id: TurnId, closing: TurnClosing) -> None: ...

    async def turn_for_client_request(self, client_request_id: ClientRequestId) -> TurnId | None:
        """The id of the turn accepted under ``client_request_id``, if any (idempotency)."""
        ...

    async def set_sandbox_mode(self, mode: SandboxMode) -> None: ...


class ChildSessionStorage(Protocol):
    """What a root's sub-agent host reads and writes (multi-agent.md §2, §5, §8)."""

    async def get_session(self, session_id: SessionId) -> SessionRecord: ...

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
    ) -> SessionRecord: ...

    async def delete_turnless_children(
        self, parent_session_id: SessionId, *, keep: Collection[str] = ()
    ) -> list[TurnlessChild]: ...

    async def reconcile(
        self, parent_session_id: SessionId, *, live_child_ids: Collection[str] = ()
    ) -> Reconciliation: ...

    async def latest_turns(self, session_ids: Collection[str]) -> dict[str, TurnRecord]: ...

    async def list_children(self, parent_session_id: SessionId) -> list[ChildSessionRecord]: ...
