"""SessionUpdate: the live, lossy per-session event stream (session-runtime.md §7).

Wire types use the protocol's camelCase field names so ``orjson.dumps`` of an envelope is the
SSE payload as is. Sequences are per session, monotonic from 1; the latest 512 envelopes are kept
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
    toolCallId: str
    providerCallId: str
    name: str
    input: JsonValue
    status: str
    output: str | None = None
    isError: bool | None = None
    artifacts: list[JsonValue] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStarted:
    type: Literal["turn_started"] = "turn_started"
    clientRequestId: str


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
    toolCall: LiveToolCall


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolProgress:
    kind: Literal["stdout", "stderr", "message"]
    chunk: str | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallProgress:
    type: Literal["tool_call_progress"] = "tool_call_progress"
    toolCallId: str
    progress: ToolProgress


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallFinished:
    type: Literal["tool_call_finished"] = "tool_call_finished"
    toolCallId: str
    providerCallId: str
    toolName: str
    status: str
    output: str
    isError: bool
    artifacts: list[JsonValue] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionRequested:
    type: Literal["permission_requested"] = "permission_requested"
    request: JsonValue


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionResolved:
    type: Literal["permission_resolved"] = "permission_resolved"
    toolCallId: str
    decision: Literal["allow_once", "deny"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanUpdated:
    type: Literal["plan_updated"] = "plan_updated"
    explanation: str | None
    plan: list[JsonValue]
    updatedAt: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextUpdated:
    """Our addition: the budget of the request just prepared for a model call."""

    type: Literal["context_updated"] = "context_updated"
    systemContextTokens: int
    conversationTokens: int
    toolSurfaceTokens: int
    estimatedInputTokens: int
    reservedOutputTokens: int
    autoCompactPercent: float


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnFinished:
    type: Literal["turn_finished"] = "turn_finished"
    outcome: JsonValue


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
    | TurnFinished
    | Resync
)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionUpdateEnvelope:
    version: int = SESSION_UPDATE_VERSION
    sessionId: str
    turnId: str | None
    sequence: int
    occurredAtMs: int
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

    session_id: str
    global_updates: GlobalUpdates | None = None
    last_sequence: int = 0
    _ring: deque[SessionUpdateEnvelope] = field(default_factory=lambda: deque(maxlen=RING_CAPACITY))
    _subscribers: set[Subscription] = field(default_factory=set)

    def emit(self, turn_id: str | None, update: SessionUpdate) -> SessionUpdateEnvelope:
        self.last_sequence += 1
        envelope = SessionUpdateEnvelope(
            sessionId=self.session_id,
            turnId=turn_id,
            sequence=self.last_sequence,
            occurredAtMs=int(time.time() * 1000),
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
