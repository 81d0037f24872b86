"""SessionUpdate: the live, lossy per-session event stream (session-runtime.md §7).

Attributes are snake_case; ``openwork_core.session.wire`` is the one place that writes them in the
protocol's camelCase (the SSE payload). Sequences are per session and never go back for the
session's lifetime: an actor numbers its updates from ``sequence_floor`` of its lease epoch, above
every earlier owner's (a restart, a takeover by another daemon, an unload and reload). The latest
512 envelopes are kept for replay; subscribers that fall behind get ``resync``; when the actor
stops, its streams get ``stream_ended`` and end."""

from __future__ import annotations

import asyncio
import enum
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Generic, Literal, TypeAlias, TypeVar

import orjson
from pydantic import JsonValue

from openwork_chat_state.messages import JsonObject, ToolCallBlock
from openwork_core.ids import ClientRequestId, SessionId, ToolCallId, TurnId
from openwork_core.plan.model import PlanStep, TurnPlan
from openwork_core.session.approval import PermissionRequest
from openwork_core.session.outcome import TurnOutcome
from openwork_core.session.wire_fields import OMIT_WHEN_NONE
from openwork_core.usage import TokenUsage
from openwork_tools import FileChange, ToolStatus

SESSION_UPDATE_VERSION = 7
RING_CAPACITY = 512
SUBSCRIBER_CAPACITY = 512
GLOBAL_CAPACITY = 4096
GLOBAL_RING_CAPACITY = 2048
SEQUENCES_PER_LEASE = 1_000_000_000
"""The sequences one lease epoch may number (an actor emitting a thousand updates a second for
eleven days); the ``(epoch - 1)``-th block of them is that epoch's."""


def sequence_floor(lease_epoch: int) -> int:
    """The sequence an actor holding the session's lease with ``lease_epoch`` starts after: the
    first owner (epoch 1) numbers from 1 as the protocol says; each later owner's block is above
    every earlier one's, so a client's ``Last-Event-ID`` from before a restart or a takeover is
    older than everything it will be sent next."""
    return max(0, lease_epoch - 1) * SEQUENCES_PER_LEASE


def broadcast_floor() -> int:
    """Where this process's ``GET /v1/events`` ids start: the wall clock in microseconds, so a
    restarted daemon's ids are above the previous process's (which emitted fewer than one event
    per microsecond of its life) unless the clock was set back past the previous start."""
    return time.time_ns() // 1000


class SessionPhase(enum.StrEnum):
    STARTING = "starting"
    RUNNING_MODEL = "running_model"
    RUNNING_TOOLS = "running_tools"
    WAITING_PERMISSION = "waiting_permission"
    COMPACTING = "compacting"


def utc_timestamp(moment: datetime) -> str:
    """The one timestamp format of the contract: RFC 3339 in UTC with ``Z`` (as pydantic writes
    the REST bodies' datetimes)."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def call_input(arguments: str) -> tuple[JsonObject, str | None]:
    """A tool call's arguments as what they are, a JSON object, and the model's text when it is
    not one (the model is untrusted: its call then fails validation, and ``input`` is ``{}``)."""
    try:
        parsed = orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        return {}, arguments
    return (parsed, None) if isinstance(parsed, dict) else ({}, arguments)


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveToolCall:
    tool_call_id: ToolCallId
    provider_call_id: str
    name: str
    input: JsonObject
    """The parsed arguments (``{}`` when the model's were not a JSON object: see ``raw_input``)."""
    status: ToolStatus | Literal["validating"]
    output: str | None = None
    is_error: bool | None = None
    artifacts: list[FileChange] | None = None
    raw_input: str | None = field(default=None, metadata=OMIT_WHEN_NONE)
    """Present only when the model's arguments were not a JSON object: its text as sent."""

    @classmethod
    def validating(cls, tool_call_id: ToolCallId, call: ToolCallBlock) -> LiveToolCall:
        arguments, raw = call_input(call.input)
        return cls(
            tool_call_id=tool_call_id,
            provider_call_id=call.id,
            name=call.name,
            input=arguments,
            status="validating",
            raw_input=raw,
        )


def file_changes(artifacts: Iterable[JsonValue]) -> list[FileChange] | None:
    """The stored ``file_change`` artifacts of a tool result as the wire writes them (``None``
    when there are none)."""
    changes = [FileChange.from_json(a) for a in artifacts if isinstance(a, dict)]
    return changes or None


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStarted:
    type: Literal["turn_started"] = "turn_started"
    client_request_id: ClientRequestId


@dataclass(frozen=True, slots=True, kw_only=True)
class PhaseChanged:
    type: Literal["phase_changed"] = "phase_changed"
    phase: SessionPhase


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDeltaUpdate:
    type: Literal["text_delta"] = "text_delta"
    delta: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningDeltaUpdate:
    type: Literal["reasoning_delta"] = "reasoning_delta"
    delta: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DraftCleared:
    type: Literal["draft_cleared"] = "draft_cleared"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStarted:
    type: Literal["tool_call_started"] = "tool_call_started"
    tool_call: LiveToolCall


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolProgress:
    kind: Literal["stdout", "stderr", "message"]
    chunk: str | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallProgress:
    type: Literal["tool_call_progress"] = "tool_call_progress"
    tool_call_id: ToolCallId
    progress: ToolProgress


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallFinished:
    type: Literal["tool_call_finished"] = "tool_call_finished"
    tool_call_id: ToolCallId
    provider_call_id: str
    tool_name: str
    status: ToolStatus
    output: str
    is_error: bool
    artifacts: list[FileChange] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionRequested:
    type: Literal["permission_requested"] = "permission_requested"
    request: PermissionRequest


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionResolved:
    type: Literal["permission_resolved"] = "permission_resolved"
    tool_call_id: ToolCallId
    decision: Literal["allow_once", "deny"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanView:
    """The one plan shape (update-plan.md §7 ``TurnPlanSnapshot{explanation, steps, updatedAt}``):
    in ``plan_updated``, in the snapshot's runtime and (with its ``turn_id``) in
    ``GET …/plan``. ``updated_at`` is RFC 3339 UTC with ``Z``."""

    explanation: str | None
    steps: list[PlanStep]
    updated_at: str

    @classmethod
    def of(cls, plan: TurnPlan) -> PlanView:
        return cls(
            explanation=plan.explanation,
            steps=list(plan.steps),
            updated_at=utc_timestamp(plan.updated_at),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanUpdated:
    """The plan's fields (``PlanView``) and, as update-plan.md §7 names it, ``plan``: the same
    steps again (kept for the spec's clients)."""

    type: Literal["plan_updated"] = "plan_updated"
    explanation: str | None
    steps: list[PlanStep]
    updated_at: str
    plan: list[PlanStep]

    @classmethod
    def of(cls, plan: TurnPlan) -> PlanUpdated:
        view = PlanView.of(plan)
        return cls(
            explanation=view.explanation,
            steps=view.steps,
            updated_at=view.updated_at,
            plan=view.steps,
        )

    @property
    def view(self) -> PlanView:
        return PlanView(explanation=self.explanation, steps=self.steps, updated_at=self.updated_at)


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextUpdated:
    """Our addition: the budget of the request just prepared for a model call."""

    type: Literal["context_updated"] = "context_updated"
    system_context_tokens: int
    conversation_tokens: int
    tool_surface_tokens: int
    estimated_input_tokens: int
    reserved_output_tokens: int
    auto_compact_percent: float


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageBody:
    """The one wire body of a usage record (``openwork_core.usage.TokenUsage``): a Turn's
    provider-reported tokens summed over its submissions, 0 where none reported (issue 14 point
    5); in ``turn_finished`` (camelCase) and in the REST turn bodies (snake_case)."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0

    @classmethod
    def of(cls, usage: TokenUsage) -> UsageBody:
        return cls(
            input_tokens=usage.input_tokens or 0,
            cached_input_tokens=usage.cached_input_tokens or 0,
            cache_write_tokens=usage.cache_write_tokens or 0,
            output_tokens=usage.output_tokens or 0,
            reasoning_tokens=usage.reasoning_tokens or 0,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnFinished:
    type: Literal["turn_finished"] = "turn_finished"
    outcome: TurnOutcome
    usage: UsageBody | None = field(default=None, metadata=OMIT_WHEN_NONE)
    """Left out when the turn's runner reported none (it crashed or was abandoned)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Resync:
    """Sent first when updates the client asked for cannot be delivered (the cursor left the
    buffer, is ahead of this process's sequences, or a subscriber fell behind): read the snapshot.
    Its envelope's ``sequence`` is the session's current sequence when the resync was decided;
    buffered updates that follow and are not newer than the snapshot are already folded in it."""

    type: Literal["resync"] = "resync"


class StreamEndReason(enum.StrEnum):
    DELETED = "deleted"
    """The session was deleted: every route for it now answers 404."""
    UNLOADED = "unloaded"
    """Its actor was stopped (idle, rebuilt, ownership lost, the daemon stopping): connect again
    to load it; its sequences continue above this one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamEnded:
    """Our addition: the session's last update from this actor; its event streams end after it."""

    type: Literal["stream_ended"] = "stream_ended"
    reason: StreamEndReason


SessionUpdate: TypeAlias = (
    TurnStarted
    | PhaseChanged
    | TextDeltaUpdate
    | ReasoningDeltaUpdate
    | DraftCleared
    | ToolCallStarted
    | ToolCallProgress
    | ToolCallFinished
    | PermissionRequested
    | PermissionResolved
    | PlanUpdated
    | ContextUpdated
    | TurnFinished
    | Resync
    | StreamEnded
)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionUpdateEnvelope:
    version: int = SESSION_UPDATE_VERSION
    session_id: SessionId
    turn_id: TurnId | None
    sequence: int
    occurred_at_ms: int
    update: SessionUpdate


@dataclass(frozen=True, slots=True, kw_only=True)
class BroadcastResync:
    """``GET /v1/events``'s ``event: resync``: events the client asked for are lost (its cursor
    left the buffer or is from another process, or it fell behind): read the sessions again.
    ``sequence`` is the broadcast's current one, also the event's ``id:``."""

    version: int = SESSION_UPDATE_VERSION
    sequence: int
    update: Resync = field(default_factory=Resync)


@dataclass(frozen=True, slots=True, kw_only=True)
class GlobalEvent:
    """One envelope on the Core-wide broadcast with its broadcast ``sequence`` (the SSE ``id:`` of
    ``GET /v1/events``): increasing across all sessions and across restarts
    (``broadcast_floor``)."""

    sequence: int
    envelope: SessionUpdateEnvelope


T = TypeVar("T", SessionUpdateEnvelope, GlobalEvent)


class UpdateSubscription(Generic[T]):
    """A bounded queue of envelopes; a subscriber that falls behind is told to resync."""

    def __init__(
        self,
        capacity: int,
        on_close: Callable[[UpdateSubscription[T]], None],
        sequence: Callable[[], int],
    ) -> None:
        self._on_close: Callable[[UpdateSubscription[T]], None] = on_close
        self._sequence = sequence
        self.queue: asyncio.Queue[T] = asyncio.Queue(capacity)
        self.lagged = False

    def offer(self, item: T) -> None:
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:
            self.lagged = True

    def finish(self, last: T) -> None:
        """The stream's last item, queued even for a subscriber that fell behind: its oldest
        queued item makes room (it is told to resync first)."""
        if self.queue.full():
            self.queue.get_nowait()
            self.lagged = True
        self.queue.put_nowait(last)

    @property
    def current_sequence(self) -> int:
        """The latest sequence of the session, or of the Core-wide broadcast."""
        return self._sequence()

    def close(self) -> None:
        self._on_close(self)


Subscription: TypeAlias = UpdateSubscription[SessionUpdateEnvelope]
GlobalSubscription: TypeAlias = UpdateSubscription[GlobalEvent]


@dataclass(frozen=True, slots=True)
class Replay(Generic[T]):
    items: tuple[T, ...]
    resync: bool
    last_sequence: int
    """The sequence when the replay was read (what a ``resync`` event carries)."""


SessionReplay: TypeAlias = Replay[SessionUpdateEnvelope]
GlobalReplay: TypeAlias = Replay[GlobalEvent]


class NumberedStream(Generic[T]):
    """A sequence counter, a ring buffer of the latest items and the subscribers: one session's
    updates (``UpdateHub``) or every session's (``GlobalUpdates``)."""

    def __init__(self, ring_capacity: int, subscriber_capacity: int, last_sequence: int) -> None:
        self._ring: deque[T] = deque(maxlen=ring_capacity)
        self._subscribers: set[UpdateSubscription[T]] = set()
        self._subscriber_capacity = subscriber_capacity
        self.last_sequence = last_sequence

    def _publish(self, item: T) -> None:
        self._ring.append(item)
        for subscriber in tuple(self._subscribers):
            subscriber.offer(item)

    def subscribe(self) -> UpdateSubscription[T]:
        subscription: UpdateSubscription[T] = UpdateSubscription(
            self._subscriber_capacity, self.unsubscribe, lambda: self.last_sequence
        )
        self._subscribers.add(subscription)
        return subscription

    def unsubscribe(self, subscription: UpdateSubscription[T]) -> None:
        self._subscribers.discard(subscription)

    def subscribe_after(
        self, after_sequence: int | None
    ) -> tuple[Replay[T], UpdateSubscription[T]]:
        """Subscribe, then read the replay, with no await between: nothing falls in between."""
        subscription = self.subscribe()
        if after_sequence is None:
            return Replay((), False, self.last_sequence), subscription
        return self.replay(after_sequence), subscription

    def replay(self, after_sequence: int) -> Replay[T]:
        """Buffered items newer than ``after_sequence``; ``resync`` when some are missing (the
        cursor left the buffer — a cursor from before a restart always has — or is ahead of
        this stream's sequence)."""
        if after_sequence > self.last_sequence:
            return Replay((), True, self.last_sequence)
        oldest = self._ring[0].sequence if self._ring else self.last_sequence + 1
        newer = tuple(e for e in self._ring if e.sequence > after_sequence)
        return Replay(newer, after_sequence < oldest - 1, self.last_sequence)

    @property
    def subscriber_count(self) -> int:
        """Clients watching now (a watched session is not idle)."""
        return len(self._subscribers)

    def __iter__(self) -> Iterator[T]:
        return iter(self._ring)


class GlobalUpdates(NumberedStream[GlobalEvent]):
    """The Core-wide broadcast of every session's updates: its own sequence (from
    ``broadcast_floor``) and a ring buffer of the latest 2 048 events, so ``GET /v1/events``
    replays after ``Last-Event-ID`` like the per-session stream."""

    def __init__(
        self, ring_capacity: int = GLOBAL_RING_CAPACITY, last_sequence: int | None = None
    ) -> None:
        first = broadcast_floor() if last_sequence is None else last_sequence
        super().__init__(ring_capacity, GLOBAL_CAPACITY, first)

    def publish(self, envelope: SessionUpdateEnvelope) -> None:
        self.last_sequence += 1
        self._publish(GlobalEvent(sequence=self.last_sequence, envelope=envelope))


class UpdateHub(NumberedStream[SessionUpdateEnvelope]):
    """One session's sequence counter (from ``sequence_floor`` of the actor's lease epoch),
    ring buffer and subscribers."""

    def __init__(
        self,
        session_id: SessionId,
        global_updates: GlobalUpdates | None = None,
        last_sequence: int = 0,
    ) -> None:
        super().__init__(RING_CAPACITY, SUBSCRIBER_CAPACITY, last_sequence)
        self.session_id = session_id
        self._global = global_updates

    def emit(self, turn_id: TurnId | None, update: SessionUpdate) -> SessionUpdateEnvelope:
        envelope = self._next(turn_id, update)
        self._publish(envelope)
        if self._global is not None:
            self._global.publish(envelope)
        return envelope

    def end(self, reason: StreamEndReason) -> SessionUpdateEnvelope:
        """The actor stops: ``stream_ended`` is emitted (and broadcast), queued as the last item
        of every subscription even one that fell behind; each stream ends after it."""
        envelope = self._next(None, StreamEnded(reason=reason))
        self._ring.append(envelope)
        for subscriber in tuple(self._subscribers):
            subscriber.finish(envelope)
        if self._global is not None:
            self._global.publish(envelope)
        return envelope

    def _next(self, turn_id: TurnId | None, update: SessionUpdate) -> SessionUpdateEnvelope:
        self.last_sequence += 1
        return SessionUpdateEnvelope(
            session_id=self.session_id,
            turn_id=turn_id,
            sequence=self.last_sequence,
            occurred_at_ms=int(time.time() * 1000),
            update=update,
        )
