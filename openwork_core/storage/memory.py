"""An in-memory implementation of the session storage port for fast runner tests: the same
contract as PostgreSQL (per-session gapless sequences, idempotent ids, the checkpoint checks of
compaction.md §6, repeatable projection reads), kept in Python lists. Not durable, one process."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import orjson

from openwork_chat_state.item import MessageKind, RealOrigin
from openwork_chat_state.messages import Role
from openwork_core.ids import ClientRequestId, CompactionId, SessionId, SpanId, TurnId
from openwork_core.plan.model import TurnPlan
from openwork_core.session.storage import OutgoingMessage, StepWrite, TurnClosing, TurnOpening
from openwork_core.storage.codec import new_message
from openwork_core.storage.compaction_records import (
    CHECKPOINT_FORMAT_VERSION,
    RUNTIME_REMINDER_FORMAT_VERSION,
    SUMMARY_FORMAT_VERSION,
    TRANSCRIPT_MAX_LIMIT,
    CheckpointCheckFailed,
    CheckpointRecord,
    CompactionKind,
    NewCheckpoint,
    NoCheckpoint,
    ProjectionRows,
    SessionMessageContents,
    TranscriptPage,
    TranscriptQueryInvalid,
)
from openwork_core.storage.errors import RecordNotFound
from openwork_core.storage.records import (
    FILE_CHANGE_TYPE,
    StoredFileChange,
    StoredMessage,
    TurnRecord,
    TurnStatus,
    TurnWarningRecord,
)
from openwork_core.storage.trace_records import SpanClosed, SpanOpened
from openwork_core.storage.usage_records import (
    SessionUsageTotals,
    StoredModelCall,
    add_usage,
    usage_totals,
)
from openwork_core.usage import TokenUsage
from openwork_tools.modes import SandboxMode


@dataclasses.dataclass(slots=True, kw_only=True)
class MemoryTurn:
    id: TurnId
    client_request_id: ClientRequestId
    sequence: int
    provider_id: str
    model_name: str
    started_at: datetime
    ended_at: datetime | None = None
    status: TurnStatus = TurnStatus.RUNNING
    model_call_count: int = 0
    model_submission_count: int = 0
    tool_call_count: int = 0
    error_code: str | None = None
    error_message: str | None = None
    plan: TurnPlan | None = None
    usage: TokenUsage = dataclasses.field(default_factory=TokenUsage)
    warnings: list[TurnWarningRecord] = dataclasses.field(default_factory=list)

    def record(self, session_id: SessionId) -> TurnRecord:
        return TurnRecord(
            id=self.id,
            session_id=session_id,
            client_request_id=self.client_request_id,
            sequence=self.sequence,
            status=self.status,
            resolved_provider_id=self.provider_id,
            resolved_model_name=self.model_name,
            model_call_count=self.model_call_count,
            model_submission_count=self.model_submission_count,
            tool_call_count=self.tool_call_count,
            input_tokens=self.usage.input_tokens,
            output_tokens=self.usage.output_tokens,
            error_code=self.error_code,
            error_message=self.error_message,
            started_at=self.started_at,
            ended_at=self.ended_at,
        )


def _now() -> datetime:
    return datetime.now(UTC)


class InMemorySessionStorage:
    """``SessionStorage`` (and its ``CompactionStorage`` / ``FileChangeStorage`` parts) of one
    session, in memory."""

    def __init__(
        self, session_id: SessionId, *, sandbox_mode: SandboxMode = SandboxMode.AUTO
    ) -> None:
        self._session_id = session_id
        self.messages: list[StoredMessage] = []
        self.turns: dict[TurnId, MemoryTurn] = {}
        self.checkpoints: list[CheckpointRecord] = []
        self.watermark: int | None = None
        self.sandbox_mode = sandbox_mode
        self.model_calls: list[StoredModelCall] = []

    # -- the port's parts ------------------------------------------------------------------
    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def compactions(self) -> InMemorySessionStorage:
        return self

    @property
    def file_changes(self) -> InMemorySessionStorage:
        return self

    # -- messages --------------------------------------------------------------------------
    def _stored(self, message_id: str) -> StoredMessage | None:
        return next((m for m in self.messages if m.id == message_id), None)

    def _insert(self, turn_id: TurnId | None, outgoing: OutgoingMessage) -> StoredMessage:
        existing = self._stored(outgoing.id)
        if existing is not None:
            return existing
        row = new_message(outgoing.id, outgoing.message, outgoing.kind, outgoing.artifacts)
        stored = StoredMessage(
            id=row.id,
            session_id=self._session_id,
            turn_id=turn_id,
            sequence=len(self.messages) + 1,
            role=row.role,
            kind=row.kind,
            content=row.content,
            provider_call_id=row.provider_call_id,
            tool_name=row.tool_name,
            created_at=_now(),
        )
        self.messages.append(stored)
        return stored

    def _turn(self, turn_id: TurnId) -> MemoryTurn:
        try:
            return self.turns[turn_id]
        except KeyError:
            raise RecordNotFound(f"unknown turn: {turn_id}") from None

    async def start_turn(
        self, opening: TurnOpening, messages: Sequence[OutgoingMessage]
    ) -> tuple[RealOrigin, ...]:
        if any(t.status is TurnStatus.RUNNING for t in self.turns.values()):
            raise CheckpointCheckFailed("the session already has a running turn")
        self.turns[opening.turn_id] = MemoryTurn(
            id=opening.turn_id,
            client_request_id=opening.client_request_id,
            sequence=len(self.turns) + 1,
            provider_id=opening.provider_id,
            model_name=opening.model_name,
            started_at=_now(),
        )
        return self._write(opening.turn_id, StepWrite(messages=tuple(messages)))

    async def append(self, turn_id: TurnId, step: StepWrite) -> tuple[RealOrigin, ...]:
        return self._write(turn_id, step)

    def _write(self, turn_id: TurnId, step: StepWrite) -> tuple[RealOrigin, ...]:
        turn = self._turn(turn_id)
        step.check_turn(turn_id)
        if step.response is not None and any(self._stored(m.id) for m in step.messages):
            raise ValueError("a response's step writes new ids only")
        stored = [self._insert(turn_id, m) for m in step.messages]
        call = step.response
        if call is not None:
            turn.tool_call_count += step.tool_calls
            turn.usage = add_usage(turn.usage, call.usage)
            key = (turn_id, call.model_call, call.submission)
            if all(
                (c.turn_id, c.call.model_call, c.call.submission) != key for c in self.model_calls
            ):
                self.model_calls.append(
                    StoredModelCall(
                        turn_id=turn_id, message_id=stored[0].id, created_at=_now(), call=call
                    )
                )
        if step.plan is not None:
            turn.plan = step.plan
        if step.submission is not None:
            turn.model_call_count = max(turn.model_call_count, step.submission)
            turn.model_submission_count += 1
        return tuple(RealOrigin(message_id=s.id, sequence=s.sequence) for s in stored)

    async def last_model_call(self) -> StoredModelCall | None:
        return self.model_calls[-1] if self.model_calls else None

    async def turn_model_calls(self, turn_id: TurnId) -> list[StoredModelCall]:
        calls = [c for c in self.model_calls if c.turn_id == turn_id]
        return sorted(calls, key=lambda c: (c.call.model_call, c.call.submission))

    async def usage_totals(self) -> SessionUsageTotals:
        return usage_totals(c.call for c in self.model_calls)

    async def append_agent_messages(
        self, turn_id: TurnId, messages: Sequence[OutgoingMessage]
    ) -> tuple[RealOrigin | None, ...]:
        origins: list[RealOrigin | None] = []
        for message in messages:
            if any(m.id == message.id for m in self.messages):
                origins.append(None)
                continue
            stored = self._insert(
                turn_id, dataclasses.replace(message, kind=MessageKind.AGENT_MESSAGE)
            )
            origins.append(RealOrigin(message_id=stored.id, sequence=stored.sequence))
        return tuple(origins)

    async def record_turn_warning(self, turn_id: TurnId, warning: TurnWarningRecord) -> None:
        turn = self._turn(turn_id)
        if all(w.code != warning.code for w in turn.warnings):
            turn.warnings.append(warning)

    async def finish_turn(self, turn_id: TurnId, closing: TurnClosing) -> None:
        turn = self._turn(turn_id)
        if turn.status is not TurnStatus.RUNNING:
            raise RecordNotFound(f"no running turn to finish: {turn_id}")
        turn.status = closing.status
        turn.ended_at = _now()
        turn.error_code = closing.error_code
        turn.error_message = closing.error_message
        if closing.model_call_count is not None:
            turn.model_call_count = closing.model_call_count
        if closing.model_submission_count is not None:
            turn.model_submission_count = closing.model_submission_count

    async def turn_for_client_request(self, client_request_id: ClientRequestId) -> TurnId | None:
        return next(
            (t.id for t in self.turns.values() if t.client_request_id == client_request_id), None
        )

    async def set_sandbox_mode(self, mode: SandboxMode) -> None:
        self.sandbox_mode = mode

    # -- compaction (compaction.md §6, §8) --------------------------------------------------
    async def insert_checkpoint(self, new: NewCheckpoint) -> CheckpointRecord:
        running = next((t.id for t in self.turns.values() if t.status is TurnStatus.RUNNING), None)
        if new.kind in (CompactionKind.MANUAL, CompactionKind.REWIND):
            if new.trigger_turn_id is not None or running is not None:
                raise CheckpointCheckFailed(f"a {new.kind} compaction needs an idle session")
        elif new.trigger_turn_id is None or running != new.trigger_turn_id:
            raise CheckpointCheckFailed(f"trigger turn {new.trigger_turn_id} is not running")
        if not new.summary.strip() or not new.runtime_reminder.strip():
            raise CheckpointCheckFailed("a checkpoint's summary and reminder are never blank")
        max_sequence = len(self.messages)
        if max_sequence == 0:
            raise CheckpointCheckFailed("the session has no message")
        if new.expected_max_sequence is not None and new.expected_max_sequence != max_sequence:
            raise CheckpointCheckFailed(f"messages changed since the read (now {max_sequence})")
        through = max_sequence
        if new.kind is CompactionKind.REWIND:
            if new.parent_compaction_id is None:
                raise CheckpointCheckFailed("a rewind needs its target checkpoint")
            parent = await self.get_checkpoint(self._session_id, new.parent_compaction_id)
            if parent.through_message_sequence != new.rewind_through_message_sequence:
                raise CheckpointCheckFailed("a rewind keeps its target's fact boundary")
            through = parent.through_message_sequence
        replayed = next((m for m in self.messages if m.id == new.last_user_message_id), None)
        if (
            replayed is None
            or replayed.role is not Role.USER
            or replayed.kind is not MessageKind.NORMAL
            or replayed.sequence != new.last_user_message_sequence
            or replayed.sequence > through
        ):
            raise CheckpointCheckFailed("the replayed message is not a user request at or below")
        record = CheckpointRecord(
            id=new.id,
            session_id=self._session_id,
            sequence=len(self.checkpoints) + 1,
            kind=new.kind,
            through_message_sequence=through,
            replaced_through_message_sequence=max_sequence,
            source_message_count=new.source_message_count,
            checkpoint_format_version=CHECKPOINT_FORMAT_VERSION,
            summary_format_version=SUMMARY_FORMAT_VERSION,
            last_user_message_id=new.last_user_message_id,
            last_user_message_sequence=new.last_user_message_sequence,
            resolved_model_name=new.resolved_model_name,
            summary=new.summary,
            runtime_state=new.runtime_state,
            runtime_reminder_format_version=RUNTIME_REMINDER_FORMAT_VERSION,
            runtime_reminder=new.runtime_reminder,
            trigger_turn_id=new.trigger_turn_id,
            parent_compaction_id=new.parent_compaction_id,
            input_tokens=new.input_tokens,
            output_tokens=new.output_tokens,
            created_at=_now(),
        )
        self.checkpoints.append(record)
        return record

    async def latest_checkpoint(self, session_id: SessionId) -> CheckpointRecord | None:
        return self.checkpoints[-1] if self.checkpoints else None

    async def get_checkpoint(
        self, session_id: SessionId, compaction_id: CompactionId
    ) -> CheckpointRecord:
        found = next((c for c in self.checkpoints if c.id == compaction_id), None)
        if found is None:
            raise RecordNotFound(f"unknown compaction checkpoint: {compaction_id}")
        return found

    async def load_projection(self, session_id: SessionId) -> ProjectionRows:
        checkpoint = await self.latest_checkpoint(session_id)
        after = 0 if checkpoint is None else checkpoint.replaced_through_message_sequence
        replayed = None if checkpoint is None else await self.replayed_message(checkpoint)
        return ProjectionRows(
            checkpoint=checkpoint,
            replayed=replayed,
            raw=tuple(self.messages[after:]),
            watermark=self.watermark,
        )

    async def replayed_message(self, checkpoint: CheckpointRecord) -> StoredMessage | None:
        sequence = checkpoint.last_user_message_sequence
        if sequence is None or sequence > len(self.messages):
            return None
        found = self.messages[sequence - 1]
        return found if found.id == checkpoint.last_user_message_id else None

    async def advance_watermark(self, session_id: SessionId, sequence: int) -> int:
        if sequence <= 0:
            raise ValueError("the pruning watermark is a message sequence (> 0)")
        self.watermark = max(self.watermark or 0, sequence)
        return self.watermark

    async def all_session_message_contents(self, session_id: SessionId) -> SessionMessageContents:
        return SessionMessageContents(
            max_sequence=len(self.messages), contents=tuple(m.content for m in self.messages)
        )

    async def read_transcript(
        self,
        session_id: SessionId,
        compaction_id: CompactionId | None = None,
        after_sequence: int = 0,
        limit: int = 20,
    ) -> TranscriptPage:
        if not 1 <= limit <= TRANSCRIPT_MAX_LIMIT:
            raise TranscriptQueryInvalid(f"limit must be between 1 and {TRANSCRIPT_MAX_LIMIT}")
        if after_sequence < 0:
            raise TranscriptQueryInvalid("afterSequence must not be negative")
        if compaction_id is None:
            checkpoint = await self.latest_checkpoint(session_id)
            if checkpoint is None:
                raise NoCheckpoint(f"session {session_id} has no compaction checkpoint")
        else:
            checkpoint = await self.get_checkpoint(session_id, compaction_id)
        rows = [
            m
            for m in self.messages[after_sequence:]
            if m.sequence <= checkpoint.through_message_sequence
        ]
        page = tuple(rows[:limit])
        return TranscriptPage(
            compaction_id=checkpoint.id,
            through_message_sequence=checkpoint.through_message_sequence,
            messages=page,
            has_more=len(rows) > limit,
            next_after_sequence=page[-1].sequence if page else after_sequence,
        )

    # -- file changes (tools.md §8) --------------------------------------------------------
    async def find(
        self, session_id: SessionId, change_ids: Sequence[str]
    ) -> list[StoredFileChange]:
        wanted = set(change_ids)
        return [
            StoredFileChange(message_id=m.id, sequence=m.sequence, artifact=a)
            for m in self.messages
            if m.role is Role.TOOL
            for block in orjson.loads(m.content)
            for a in block.get("artifacts") or ()
            if isinstance(a, dict)
            and a.get("type") == FILE_CHANGE_TYPE
            and a.get("changeId") in wanted
        ]

    async def set_undone(self, session_id: SessionId, undone: Mapping[str, bool]) -> None:
        for index, message in enumerate(self.messages):
            if message.role is not Role.TOOL:
                continue
            blocks = orjson.loads(message.content)
            changed = False
            for block in blocks:
                for artifact in block.get("artifacts") or ():
                    change = artifact.get("changeId") if isinstance(artifact, dict) else None
                    if isinstance(change, str) and change in undone:
                        artifact["undone"] = undone[change]
                        changed = True
            if changed:
                content = orjson.dumps(blocks).decode()
                self.messages[index] = dataclasses.replace(message, content=content)


class InMemorySpanSink:
    """The trace writer's ``SpanSink`` in memory: every span by id, as its batches left it."""

    def __init__(self) -> None:
        self.opened: dict[SpanId, SpanOpened] = {}
        self.closed: dict[SpanId, SpanClosed] = {}

    async def write_span_batch(
        self,
        opened: Sequence[tuple[SpanOpened, SpanClosed | None]],
        closed: Sequence[SpanClosed],
    ) -> None:
        for span, closing in opened:
            self.opened[span.span_id] = span
            if closing is not None:
                self.closed[span.span_id] = closing
        for closing in closed:
            if closing.span_id in self.opened:
                self.closed[closing.span_id] = closing


__all__ = ["InMemorySessionStorage", "InMemorySpanSink", "MemoryTurn"]
