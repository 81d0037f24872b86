"""SessionHandle: the small object callers hold for one session (DESIGN.md §4.2). It holds only
the actor's command queue: each method puts one command and awaits its reply future; a stopped
actor answers ``ActorStopped``."""

from __future__ import annotations

import contextlib

from openwork_core.agents.messages import AgentMessage, check_deliverable
from openwork_core.context.inspection import ContextInspection
from openwork_core.ids import CompactionId, SessionId, ToolCallId, TurnId
from openwork_core.session.approval import PermissionDecision
from openwork_core.session.commands import (
    ApplyFileChanges,
    CancelTurn,
    CommandQueue,
    Compact,
    DeliverAgentMessage,
    GetSnapshot,
    GetStatus,
    InspectContext,
    ResolvePermission,
    RevertTurns,
    Rewind,
    SessionStatus,
    SetPermissionMode,
    StartTurn,
    SteerTurn,
    Stop,
    Subscribe,
    SwitchModel,
)
from openwork_core.session.compaction.run import CompactionResult
from openwork_core.session.errors import ActorStopped
from openwork_core.session.revert import RevertResult, RevertStore
from openwork_core.session.runner.context import ResolvedModel, TurnSpec
from openwork_core.session.runner.steering import Steer, SteerAccepted
from openwork_core.session.snapshot import SessionSnapshot
from openwork_core.session.turn_accepted import TurnAccepted
from openwork_core.session.update_streams import SessionReplay, Subscription
from openwork_core.session.updates import StreamEndReason
from openwork_tools.modes import SandboxMode
from openwork_tools.results import FileChange
from openwork_tools.undo import ChangeDirection


class SessionHandle:
    """The small object callers hold for one session."""

    def __init__(self, session_id: SessionId, queue: CommandQueue) -> None:
        self.session_id = session_id
        self._queue = queue

    @property
    def stopped(self) -> bool:
        """The actor's loop ended (stopped, or crashed): every command answers ``ActorStopped``
        and the registry builds a new actor on the next load (issue 22 point 7)."""
        return self._queue.closed

    async def start_turn(self, spec: TurnSpec) -> TurnAccepted:
        return await self._queue.ask(StartTurn(spec))

    async def steer_turn(self, steer: Steer) -> SteerAccepted:
        return await self._queue.ask(SteerTurn(steer))

    async def cancel_turn(self, turn_id: TurnId) -> None:
        await self._queue.ask(CancelTurn(turn_id))

    async def deliver_agent_message(self, message: AgentMessage) -> None:
        """Check the envelope (``AgentMessageTooLarge``, code ``agent_delivery_failed``, at 4 000
        tokens or more), then enqueue it into the mailbox without waiting; ``ActorStopped`` when
        the session is gone."""
        check_deliverable(message)
        await self._queue.post(DeliverAgentMessage(message))

    async def set_permission_mode(self, mode: SandboxMode) -> None:
        await self._queue.ask(SetPermissionMode(mode))

    async def switch_model(self, model: ResolvedModel) -> None:
        """The running turn, if any, uses ``model`` from its next model call (issue 26)."""
        await self._queue.ask(SwitchModel(model))

    async def apply_file_changes(
        self, change_ids: tuple[str, ...], direction: ChangeDirection
    ) -> tuple[FileChange, ...]:
        return await self._queue.ask(ApplyFileChanges(change_ids, direction))

    async def revert(self, turn_id: TurnId | None, store: RevertStore) -> RevertResult:
        """Revert ``turn_id`` and every later turn; ``None`` puts the last revert back."""
        return await self._queue.ask(RevertTurns(turn_id, store))

    async def compact(self, model: ResolvedModel) -> CompactionResult:
        return await self._queue.ask(Compact(model))

    async def rewind(self, compaction_id: CompactionId, model: ResolvedModel) -> CompactionResult:
        return await self._queue.ask(Rewind(compaction_id, model))

    async def inspect_context(self, model: ResolvedModel) -> ContextInspection:
        return await self._queue.ask(InspectContext(model))

    async def resolve_permission(
        self, turn_id: TurnId, tool_call_id: ToolCallId, decision: PermissionDecision
    ) -> None:
        await self._queue.ask(ResolvePermission(turn_id, tool_call_id, decision))

    async def snapshot(self) -> SessionSnapshot:
        return await self._queue.ask(GetSnapshot())

    async def subscribe(self, after_sequence: int | None) -> tuple[SessionReplay, Subscription]:
        return await self._queue.ask(Subscribe(after_sequence))

    async def status(self) -> SessionStatus:
        return await self._queue.ask(GetStatus())

    async def active_turn_id(self) -> TurnId | None:
        return (await self.status()).active_turn_id

    async def shutdown(self, reason: StreamEndReason = StreamEndReason.UNLOADED) -> None:
        """Stop the actor (its active turn ends cancelled; its streams end with
        ``stream_ended``/``reason``); returns once its loop has ended. Stopping a stopped actor
        is a no-op."""
        if not self._queue.closed:
            with contextlib.suppress(ActorStopped):  # someone else stopped it first
                await self._queue.ask(Stop(reason=reason))
        await self._queue.stopped
