"""SessionUpdate: the live, lossy per-session event stream (session-runtime.md §7).

Attributes are snake_case; ``openwork_core.session.wire`` is the one place that writes them in the
protocol's camelCase (the SSE payload). Sequences are per session, monotonic from 1; the latest 512 envelopes are kept
for replay; subscribers that fall behind get ``resync``."""

from __future__ import annotations

import asyncio
import enum
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeAlias, TypeVar

from pydantic import JsonValue

from openwork_core.ids import ClientRequestId, SessionId, ToolCallId, TurnId
from openwork_core.session.approval import PermissionRequest
from openwork_core.session.outcome import TurnOutcome
from openwork_core.session.wire_fields import OMIT_WHEN_NONE

SESSION_UPDATE_VERSION = 7
RING_CAPACITY = 512
SUBSCRIBER_CAPACITY = 512
GLOBAL_CAPACITY = 4096
GLOBAL_RING_CAPACITY = 2048


class SessionPhase(enum.StrEnum):
    STARTING = "starting"
    RUNNING_MODEL = "running_model"
    RUNNING_TOOLS = "running_tools"
    WAITING_PERMISSION = "waiting_permission"
    COMPACTING = "compacting"


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveToolCall:
    tool_call_id: ToolCallId
    provider_call_id: str
    name: str
    input: JsonValue
    status: str
    output: str | None = None
    is_error: bool | None = None
    artifacts: list[JsonValue] | None = None


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
    status: str
    output: str
    is_error: bool
    artifacts: list[JsonValue] | None = None


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
class PlanUpdated:
    type: Literal["plan_updated"] = "plan_updated"
    explanation: str | None
    plan: list[JsonValue]
    updated_at: str


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
class WarningRaised:
    """Our addition (issue 24 point 4): the model or its server cannot work as configured for
    this turn (``code``: ``openwork_core.models.warnings.WarningCode``); ``message`` says what
    to change. Each code once per turn, also kept in the turn's ``warnings``."""

    type: Literal["warning"] = "warning"
    code: str
    message: str
    model_call: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnTokenUsage:
    """A turn's provider-reported tokens summed over its submissions (issue 14 point 5); a
    figure no submission reported is 0."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnFinished:
    type: Literal["turn_finished"] = "turn_finished"
    outcome: TurnOutcome
    usage: TurnTokenUsage | None = field(default=None, metadata=OMIT_WHEN_NONE)
    """Left out when the turn's runner reported none (it crashed or was abandoned)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Resync:
    """Sent first when updates the client asked for cannot be delivered (the cursor left the
    buffer, is ahead of this process's sequences, or a subscriber fell behind): read the snapshot.
    Its envelope's ``sequence`` is the session's current sequence when the resync was decided;
    buffered updates that follow and are not newer than the snapshot are already folded in it."""

    type: Literal["resync"] = "resync"


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
    | WarningRaised
    | TurnFinished
    | Resync
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
class GlobalEvent:
    """One envelope on the Core-wide broadcast with its broadcast ``sequence`` (the SSE ``id:`` of
    ``GET /v1/events``): monotonic from 1 per process, across all sessions."""

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

    @property
    def current_sequence(self) -> int:
        """The latest sequence of the session, or of the Core-wide broadcast."""
        return self._sequence()

    def close(self) -> None:
        self._on_close(self)


Subscription: TypeAlias = UpdateSubscription[SessionUpdateEnvelope]
GlobalSubscription: TypeAlias = UpdateSubscription[GlobalEvent]


@dataclass(frozen=True, slots=True)
class GlobalReplay:
    events: tuple[GlobalEvent, ...]
    resync: bool
    last_sequence: int = 0


class GlobalUpdates:
    """The Core-wide broadcast of every session's updates: its own sequence and a ring buffer of
    the latest 2 048 events, so ``GET /v1/events`` replays after ``Last-Event-ID`` like the
    per-session stream."""

    def __init__(self, ring_capacity: int = GLOBAL_RING_CAPACITY) -> None:
        self._subscribers: set[GlobalSubscription] = set()
        self._ring: deque[GlobalEvent] = deque(maxlen=ring_capacity)
        self.last_sequence = 0

    def publish(self, envelope: SessionUpdateEnvelope) -> None:
        self.last_sequence += 1
        event = GlobalEvent(sequence=self.last_sequence, envelope=envelope)
        self._ring.append(event)
        for subscriber in tuple(self._subscribers):
            subscriber.offer(event)

    def subscribe(self) -> GlobalSubscription:
        subscription: GlobalSubscription = UpdateSubscription(
            GLOBAL_CAPACITY, self.unsubscribe, lambda: self.last_sequence
        )
        self._subscribers.add(subscription)
        return subscription

    def subscribe_after(
        self, after_sequence: int | None
    ) -> tuple[GlobalReplay, GlobalSubscription]:
        """Subscribe, then read the replay, with no await between: nothing falls in between."""
        subscription = self.subscribe()
        if after_sequence is None:
            return GlobalReplay((), False, self.last_sequence), subscription
        return self.replay(after_sequence), subscription

    def replay(self, after_sequence: int) -> GlobalReplay:
        """Buffered events newer than ``after_sequence``; ``resync`` when some are missing (the
        cursor left the buffer, or is ahead of this process's sequence)."""
        if after_sequence > self.last_sequence:
            return GlobalReplay((), True, self.last_sequence)
        oldest = self._ring[0].sequence if self._ring else self.last_sequence + 1
        newer = tuple(e for e in self._ring if e.sequence > after_sequence)
        return GlobalReplay(newer, after_sequence < oldest - 1, self.last_sequence)

    def unsubscribe(self, subscription: GlobalSubscription) -> None:
        self._subscribers.discard(subscription)


@dataclass(frozen=True, slots=True)
class Replay:
    envelopes: tuple[SessionUpdateEnvelope, ...]
    resync: bool
    last_sequence: int = 0
    """The session's sequence when the replay was read (what a ``resync`` envelope carries)."""


@dataclass(slots=True)
class UpdateHub:
    """One session's sequence counter, ring buffer and subscribers."""

    session_id: SessionId
    global_updates: GlobalUpdates | None = None
    last_sequence: int = 0
    _ring: deque[SessionUpdateEnvelope] = field(default_factory=lambda: deque(maxlen=RING_CAPACITY))
    _subscribers: set[Subscription] = field(default_factory=set)

    def emit(self, turn_id: TurnId | None, update: SessionUpdate) -> SessionUpdateEnvelope:
        self.last_sequence += 1
        envelope = SessionUpdateEnvelope(
            session_id=self.session_id,
            turn_id=turn_id,
            sequence=self.last_sequence,
            occurred_at_ms=int(time.time() * 1000),
            update=update,
        )
        self._ring.append(envelope)
        for subscriber in tuple(self._subscribers):
            subscriber.offer(envelope)
        if self.global_updates is not None:
            self.global_updates.publish(envelope)
        return envelope

    def replay(self, after_sequence: int) -> Replay:
        """Buffered envelopes newer than ``after_sequence``; ``resync`` when some are missing
        (the cursor fell out of the buffer, or is ahead of this process's sequences)."""
        if after_sequence > self.last_sequence:
            return Replay((), True, self.last_sequence)
        oldest = self._ring[0].sequence if self._ring else self.last_sequence + 1
        resync = after_sequence < oldest - 1
        newer = tuple(e for e in self._ring if e.sequence > after_sequence)
        return Replay(newer, resync, self.last_sequence)

    @property
    def subscriber_count(self) -> int:
        """Clients watching this session now (a watched session is not idle)."""
        return len(self._subscribers)

    def subscribe(self) -> Subscription:
        subscription: Subscription = UpdateSubscription(
            SUBSCRIBER_CAPACITY, self.unsubscribe, lambda: self.last_sequence
        )
        self._subscribers.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self._subscribers.discard(subscription)

    def __iter__(self) -> Iterator[SessionUpdateEnvelope]:
        return iter(self._ring)
