"""The session actor's commands (session-runtime.md §2) and its bounded command queue
(DESIGN.md §4.2).

Each command is a frozen value; one that answers carries its reply future. Callers never see the
actor: a ``SessionHandle`` puts commands on the ``CommandQueue`` and awaits their replies. A
stopped actor answers ``ActorStopped``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Generic, TypeAlias, TypeVar

from openwork_core.agents.messages import AgentMessage
from openwork_core.context.inspection import ContextInspection
from openwork_core.ids import CompactionId, ToolCallId, TurnId
from openwork_core.session.approval import PermissionDecision
from openwork_core.session.compaction.run import CompactionResult
from openwork_core.session.errors import ActorStopped
from openwork_core.session.outcome import TurnOutcome
from openwork_core.session.revert import RevertResult, RevertStore
from openwork_core.session.runner.context import ResolvedModel, TurnSpec
from openwork_core.session.runner.steering import Steer, SteerAccepted
from openwork_core.session.snapshot import SessionSnapshot
from openwork_core.session.storage import TurnClosing
from openwork_core.session.turn_accepted import TurnAccepted
from openwork_core.session.update_streams import SessionReplay, Subscription
from openwork_core.session.updates import StreamEndReason
from openwork_core.storage.compaction_records import CompactionKind
from openwork_core.usage import TokenUsage
from openwork_tools.modes import SandboxMode
from openwork_tools.results import FileChange
from openwork_tools.undo import ChangeDirection

T = TypeVar("T")


def _reply() -> asyncio.Future[T]:
    return asyncio.get_running_loop().create_future()


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionStatus:
    """What Core asks of a loaded session without waiting for a turn."""

    active_turn_id: TurnId | None
    permission_mode: SandboxMode
    reload_required: bool
    """A checkpoint committed but could not be installed (compaction.md §7)."""
    pending_permission: bool
    watchers: int = 0
    """Clients subscribed to the session's live updates."""
    unwritten_turn_id: TurnId | None = None
    """A turn that ended here whose terminal state an outage kept out of the database."""
    compaction: CompactionKind | None = None
    """The manual compaction or rewind the actor's own task runs now (``manual`` / ``rewind``)."""

    @property
    def busy(self) -> bool:
        """A turn or a compaction runs: the session is not idle."""
        return self.active_turn_id is not None or self.compaction is not None


@dataclass(frozen=True, slots=True)
class _Asks(Generic[T]):
    reply: asyncio.Future[T] = field(default_factory=_reply, kw_only=True)


@dataclass(frozen=True, slots=True)
class StartTurn(_Asks[TurnAccepted]):
    spec: TurnSpec


@dataclass(frozen=True, slots=True)
class SteerTurn(_Asks[SteerAccepted]):
    """Input for the running turn (issue 26 point 1): committed before the reply."""

    steer: Steer


@dataclass(frozen=True, slots=True)
class CancelTurn(_Asks[None]):
    turn_id: TurnId


@dataclass(frozen=True, slots=True)
class ResolvePermission(_Asks[None]):
    turn_id: TurnId
    tool_call_id: ToolCallId
    decision: PermissionDecision


@dataclass(frozen=True, slots=True)
class SetPermissionMode(_Asks[None]):
    mode: SandboxMode


@dataclass(frozen=True, slots=True)
class SwitchModel(_Asks[None]):
    """Issue 26 point 4: the session's newly stored model, for the running turn's next model
    call (an idle session resolves it at its next turn)."""

    model: ResolvedModel


@dataclass(frozen=True, slots=True)
class ApplyFileChanges(_Asks[tuple[FileChange, ...]]):
    change_ids: tuple[str, ...]
    direction: ChangeDirection


@dataclass(frozen=True, slots=True)
class RevertTurns(_Asks[RevertResult]):
    """Issue 26 point 3: hide ``turn_id`` and every later turn (``None``: put the last revert
    back); idle only."""

    turn_id: TurnId | None
    store: RevertStore


@dataclass(frozen=True, slots=True)
class Compact(_Asks[CompactionResult]):
    model: ResolvedModel


@dataclass(frozen=True, slots=True)
class Rewind(_Asks[CompactionResult]):
    compaction_id: CompactionId
    model: ResolvedModel


@dataclass(frozen=True, slots=True)
class InspectContext(_Asks[ContextInspection]):
    """The next request's regions through the runner's own prepare (context-window.md §8)."""

    model: ResolvedModel


@dataclass(frozen=True, slots=True)
class GetSnapshot(_Asks[SessionSnapshot]):
    pass


@dataclass(frozen=True, slots=True)
class Subscribe(_Asks[tuple[SessionReplay, Subscription]]):
    after_sequence: int | None


@dataclass(frozen=True, slots=True)
class GetStatus(_Asks[SessionStatus]):
    pass


@dataclass(frozen=True, slots=True)
class Stop(_Asks[None]):
    """Cancel the active turn (outcome cancelled), wait for it, stop the loop; the session's
    streams end with ``stream_ended`` and ``reason``."""

    reason: StreamEndReason = StreamEndReason.UNLOADED


@dataclass(frozen=True, slots=True)
class DeliverAgentMessage:
    """Enqueue into the mailbox; never creates a Turn (multi-agent.md §6). No reply."""

    message: AgentMessage


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """Posted by the actor's own turn task when the runner returned (internal)."""

    turn_id: TurnId
    outcome: TurnOutcome
    unwritten: TurnClosing | None = None
    """Its terminal state, when an outage kept the runner from writing it."""
    usage: TokenUsage | None = None
    """The provider-reported usage of the turn's submissions (``turn_finished``)."""


@dataclass(frozen=True, slots=True)
class CompactionEnded:
    """Posted by the actor's own compaction task (a manual compaction or a rewind) when it ended
    (internal): the actor is idle again, then the caller gets ``result``."""

    reply: asyncio.Future[CompactionResult]
    result: CompactionResult | Exception

    def answer(self) -> None:
        if self.reply.done():
            return
        if isinstance(self.result, Exception):
            self.reply.set_exception(self.result)
        else:
            self.reply.set_result(self.result)


SessionCommand: TypeAlias = (
    StartTurn
    | SteerTurn
    | CancelTurn
    | ResolvePermission
    | SetPermissionMode
    | SwitchModel
    | ApplyFileChanges
    | RevertTurns
    | Compact
    | Rewind
    | InspectContext
    | GetSnapshot
    | Subscribe
    | GetStatus
    | Stop
    | DeliverAgentMessage
    | TurnEnded
    | CompactionEnded
)


class CommandQueue:
    """The actor's bounded inbox. ``close`` makes every later send answer ``ActorStopped``;
    the actor fails what is still queued the same way."""

    def __init__(self, capacity: int) -> None:
        self._queue: asyncio.Queue[SessionCommand] = asyncio.Queue(capacity)
        self._closed = False
        self.stopped: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        """Resolved when the actor's loop has ended."""

    @property
    def closed(self) -> bool:
        return self._closed

    async def post(self, command: SessionCommand) -> None:
        if self._closed:
            raise ActorStopped()
        await self._queue.put(command)

    def post_nowait(self, command: SessionCommand) -> bool:
        """Enqueue without waiting; False when stopped or full (the caller logs the loss)."""
        if self._closed:
            return False
        try:
            self._queue.put_nowait(command)
        except asyncio.QueueFull:
            return False
        return True

    async def ask(self, command: _Asks[T]) -> T:
        await self.post(command)  # type: ignore[arg-type]
        return await command.reply

    async def receive(self) -> SessionCommand:
        return await self._queue.get()

    def close(self) -> list[SessionCommand]:
        """Refuse new commands; return what was queued and not yet received."""
        self._closed = True
        left: list[SessionCommand] = []
        while not self._queue.empty():
            left.append(self._queue.get_nowait())
        return left


async def settle(reply: asyncio.Future[T], work: Awaitable[T]) -> None:
    """Run one command's work and settle its reply; an error goes to the caller, not the loop.
    A loop that dies meanwhile (its task cancelled) answers ``ActorStopped``, never silence."""
    try:
        result = await work
    except Exception as exc:
        if not reply.done():
            reply.set_exception(exc)
        return
    except BaseException:
        if not reply.done():
            reply.set_exception(ActorStopped())
        raise
    if not reply.done():
        reply.set_result(result)
