"""SessionHandle: the small object callers hold for one session (DESIGN.md §4.2). Each method
sends one command to the actor's bounded queue; a stopped actor answers ``ActorStopped``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openwork_core.agents import AgentMessage, check_deliverable
from openwork_core.ids import CompactionId, ToolCallId, TurnId
from openwork_core.session.approval import PermissionDecision
from openwork_core.session.compaction import CompactionResult
from openwork_core.session.runner import ResolvedModel, SessionServices, TurnSpec
from openwork_core.session.snapshot import SessionSnapshot
from openwork_core.session.updates import Replay, Subscription
from openwork_core.storage.postgres.file_changes import FileChangeStore
from openwork_tools import FileChange, SandboxMode
from openwork_tools.undo import ChangeDirection

if TYPE_CHECKING:
    from openwork_core.session.actor import SessionActor, TurnAccepted


class SessionHandle:
    """The small object callers hold for one session."""

    def __init__(self, actor: SessionActor) -> None:
        self._actor = actor

    @property
    def session_id(self) -> str:
        return self._actor.session_id

    @property
    def reload_required(self) -> bool:
        return self._actor.reload_required

    @property
    def services(self) -> SessionServices:
        return self._actor.services

    async def start_turn(self, spec: TurnSpec) -> TurnAccepted:
        return await self._actor.call(lambda: self._actor._start_turn(spec))

    async def cancel_turn(self, turn_id: TurnId) -> None:
        await self._actor.call(lambda: self._actor._cancel_turn(turn_id))

    async def deliver_agent_message(self, message: AgentMessage) -> None:
        """Check the envelope (``AgentMessageTooLarge``, code ``agent_delivery_failed``, at 4 000
        tokens or more), then enqueue it into the mailbox without waiting; ``ActorStopped`` when
        the session is gone."""
        check_deliverable(message)
        await self._actor.post(lambda: self._actor._deliver(message))

    async def set_permission_mode(self, mode: SandboxMode) -> None:
        await self._actor.call(lambda: self._actor._set_mode(mode))

    async def apply_file_changes(
        self, store: FileChangeStore, change_ids: tuple[str, ...], direction: ChangeDirection
    ) -> tuple[FileChange, ...]:
        return await self._actor.call(
            lambda: self._actor._file_changes(store, change_ids, direction)
        )

    async def compact(self, model: ResolvedModel) -> CompactionResult:
        return await self._actor.call(lambda: self._actor._compact(model))

    async def rewind(self, compaction_id: CompactionId, model: ResolvedModel) -> CompactionResult:
        return await self._actor.call(lambda: self._actor._rewind(compaction_id, model))

    async def resolve_permission(
        self, turn_id: TurnId, tool_call_id: ToolCallId, decision: PermissionDecision
    ) -> None:
        await self._actor.call(
            lambda: self._actor._resolve_permission(turn_id, tool_call_id, decision)
        )

    async def snapshot(self) -> SessionSnapshot:
        return await self._actor.call(self._actor._snapshot)

    async def subscribe(self, after_sequence: int | None) -> tuple[Replay, Subscription]:
        return await self._actor.call(lambda: self._actor._subscribe(after_sequence))

    async def active_turn_id(self) -> TurnId | None:
        return await self._actor.call(self._actor._active_turn_id)

    async def shutdown(self) -> None:
        await self._actor.shutdown()
