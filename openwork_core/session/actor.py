"""SessionActor: one per active session. It owns the active turn, the live update stream and the
snapshot; the runner task does the turn's work and reports back (session-runtime.md §1–§2).

Callers hold a SessionHandle; each method sends one command to the actor's bounded queue and
awaits the reply. A stopped actor answers ActorStopped."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import structlog

from openwork_core.agents import AgentMessage, TurnSlot
from openwork_core.context.builder import SystemContextBuilder
from openwork_core.session.approval import PermissionDecision
from openwork_core.session.compaction import (
    CompactionInstallFailed,
    CompactionResult,
    rewind,
    run_compaction,
)
from openwork_core.session.errors import (
    ActorStopped,
    Busy,
    ReloadRequired,
    SessionActive,
    TurnNotActive,
)
from openwork_core.session.file_changes import apply_recorded_changes
from openwork_core.session.handle import SessionHandle as SessionHandle
from openwork_core.session.outcome import Cancelled, Failed, FailureCode, TurnOutcome
from openwork_core.session.runner import (
    PermissionSlot,
    ResolvedModel,
    SessionServices,
    TurnContext,
    TurnRunner,
    TurnSpec,
    outcome_json,
)
from openwork_core.session.runner.compaction_step import compaction_deps
from openwork_core.session.snapshot import (
    IdleRuntime,
    RunningRuntime,
    Runtime,
    SessionSnapshot,
    fold,
    sandbox_view,
)
from openwork_core.session.updates import (
    Replay,
    SessionUpdate,
    Subscription,
    TurnFinished,
    TurnStarted,
    UpdateHub,
)
from openwork_core.storage import PostgresStore
from openwork_core.storage.postgres.compactions import CompactionKind
from openwork_core.storage.postgres.file_changes import FileChangeStore
from openwork_tools import FileChange, SandboxMode, SandboxStatus
from openwork_tools.undo import ChangeDirection

log = structlog.get_logger(__name__)
T = TypeVar("T")
_QUEUE_CAPACITY = 64

TurnFinishedHook = Callable[[str, TurnOutcome], Awaitable[None]]
"""Called by the actor with ``(turn_id, outcome)`` after a Turn ended and the session is idle
again: a sub-agent reports its outcome to its parent here (multi-agent.md §6, no watcher)."""


@dataclass(frozen=True, slots=True)
class TurnAccepted:
    turn_id: str
    client_request_id: str


@dataclass(slots=True)
class _ActiveTurn:
    turn_id: str
    client_request_id: str
    cancel: asyncio.Event
    permission: PermissionSlot
    slot: TurnSlot | None = None
    task: asyncio.Task[TurnOutcome] | None = None


@dataclass(frozen=True, slots=True)
class _Command:
    run: Callable[[], Awaitable[object]]
    reply: asyncio.Future[object]


class SessionActor:
    def __init__(
        self,
        *,
        session_id: str,
        services: SessionServices,
        hub: UpdateHub,
        mode: SandboxMode,
        sandbox: SandboxStatus,
        store: PostgresStore,
        on_turn_finished: TurnFinishedHook | None = None,
    ) -> None:
        self.session_id = session_id
        self._on_turn_finished = on_turn_finished
        self._services = services
        self._hub = hub
        self._mode = mode
        self._sandbox = sandbox
        self._store = store
        self._runtime: Runtime = IdleRuntime()
        self._active: _ActiveTurn | None = None
        self._accepted: dict[str, str] = {}
        self._queue: asyncio.Queue[_Command | None] = asyncio.Queue(_QUEUE_CAPACITY)
        self._task: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def mode(self) -> SandboxMode:
        return self._mode

    @property
    def reload_required(self) -> bool:
        """A checkpoint committed but could not be installed (compaction.md §7)."""
        return self._services.compaction_history.reload_required

    @property
    def services(self) -> SessionServices:
        return self._services

    def spawn(self) -> SessionHandle:
        self._task = asyncio.get_running_loop().create_task(
            self._run(), name=f"session-{self.session_id}"
        )
        return SessionHandle(self)

    async def _run(self) -> None:
        # every log line of this session's work (turns, compaction, rewind, undo) names it
        structlog.contextvars.clear_contextvars()  # not the ids of a parent's turn
        structlog.contextvars.bind_contextvars(session_id=self.session_id)
        while True:
            command = await self._queue.get()
            if command is None:
                break
            if command.reply.cancelled():
                continue
            try:
                result = await command.run()
            except Exception as exc:
                if not command.reply.done():
                    command.reply.set_exception(exc)
            else:
                if not command.reply.done():
                    command.reply.set_result(result)
        while not self._queue.empty():
            pending = self._queue.get_nowait()
            if pending is not None and not pending.reply.done():
                pending.reply.set_exception(ActorStopped())

    async def call(self, run: Callable[[], Awaitable[T]]) -> T:
        if self._task is None or self._task.done():
            raise ActorStopped()
        reply: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        await self._queue.put(_Command(run, reply))
        return await reply  # type: ignore[return-value]

    async def post(self, run: Callable[[], Awaitable[None]]) -> None:
        """Enqueue a command without waiting for it to run (``DeliverAgentMessage``)."""
        if self._task is None or self._task.done():
            raise ActorStopped()
        reply: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        await self._queue.put(_Command(run, reply))

    # -- updates -----------------------------------------------------------------------------
    def _emit(self, turn_id: str | None, update: SessionUpdate) -> None:
        envelope = self._hub.emit(turn_id, update)
        self._runtime = fold(self._runtime, envelope)

    # -- commands (run inside the actor loop) ------------------------------------------------
    async def _start_turn(self, spec: TurnSpec) -> TurnAccepted:
        if self.reload_required:
            raise ReloadRequired()
        known = self._accepted.get(spec.client_request_id)
        if known is None:
            row = await self._store.get_turn_by_client_request(
                self.session_id, spec.client_request_id
            )
            known = None if row is None else row.id
        if known is not None:
            return TurnAccepted(known, spec.client_request_id)
        if self._active is not None:
            raise Busy(self._active.turn_id)
        active = _ActiveTurn(
            spec.turn_id, spec.client_request_id, asyncio.Event(), PermissionSlot(), spec.turn_slot
        )
        self._active = active
        self._accepted[spec.client_request_id] = spec.turn_id
        self._idle.clear()
        self._emit(spec.turn_id, TurnStarted(clientRequestId=spec.client_request_id))
        runner = TurnRunner(
            TurnContext(
                spec=spec,
                services=self._services,
                emit=lambda u: self._emit(spec.turn_id, u),
                cancel=active.cancel,
                permission=active.permission,
            )
        )
        active.task = asyncio.get_running_loop().create_task(
            runner.run(), name=f"turn-{spec.turn_id}"
        )
        active.task.add_done_callback(lambda t: self._on_runner_done(active, t))
        return TurnAccepted(spec.turn_id, spec.client_request_id)

    def _on_runner_done(self, active: _ActiveTurn, task: asyncio.Task[TurnOutcome]) -> None:
        if active.slot is not None:
            active.slot.release()  # however the Turn ended (multi-agent.md §7)

        async def finished() -> None:
            outcome: TurnOutcome
            if task.cancelled():
                outcome = Cancelled()
            elif task.exception() is not None:
                log.error("turn.runner_crashed", error=repr(task.exception()))
                outcome = Failed(
                    FailureCode.ACTOR_STOPPED, f"the turn runner crashed: {task.exception()!r}"
                )
            else:
                outcome = task.result()
            self._emit(active.turn_id, TurnFinished(outcome=outcome_json(outcome)))
            if self._active is active:
                self._active = None
                self._idle.set()
            if self._on_turn_finished is not None:
                try:
                    await self._on_turn_finished(active.turn_id, outcome)
                except Exception as exc:  # the outcome stands; the hook only reports it
                    log.warning("turn.finished_hook_failed", error=repr(exc))

        reply: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        try:
            self._queue.put_nowait(_Command(finished, reply))
        except asyncio.QueueFull:
            asyncio.get_running_loop().create_task(self._queue.put(_Command(finished, reply)))

    async def _cancel_turn(self, turn_id: str) -> None:
        if self._active is None or self._active.turn_id != turn_id:
            raise TurnNotActive(turn_id)
        self._active.cancel.set()

    async def _resolve_permission(
        self, turn_id: str, tool_call_id: str, decision: PermissionDecision
    ) -> None:
        if self._active is None or self._active.turn_id != turn_id:
            raise TurnNotActive(turn_id)
        self._active.permission.resolve(tool_call_id, decision)

    async def _compact(self, model: ResolvedModel) -> CompactionResult:
        """Manual compaction: idle only, no pruning, System Context from the agent prompt alone."""
        self._require_idle()
        system = SystemContextBuilder().build(self._services.agent.system_prompt)
        deps = compaction_deps(self.session_id, self._services, model)
        return await self._installing(
            run_compaction(deps, CompactionKind.MANUAL, None, None, system)
        )

    async def _rewind(self, compaction_id: str, model: ResolvedModel) -> CompactionResult:
        self._require_idle()
        system = SystemContextBuilder().build(self._services.agent.system_prompt)
        return await self._installing(
            rewind(compaction_deps(self.session_id, self._services, model), compaction_id, system)
        )

    async def _installing(self, work: Awaitable[CompactionResult]) -> CompactionResult:
        try:
            return await work
        except CompactionInstallFailed:
            self._services.compaction_history.reload_required = True
            raise

    def _require_idle(self) -> None:
        if self._active is not None:
            raise SessionActive(self._active.turn_id)

    async def _deliver(self, message: AgentMessage) -> None:
        """``DeliverAgentMessage``: enqueue only; never creates a Turn (session-runtime.md §2)."""
        if not self._services.mailbox.deliver(message):
            log.info("agent_message.duplicate_dropped", message_id=message.id)

    async def _file_changes(
        self, store: FileChangeStore, change_ids: tuple[str, ...], direction: ChangeDirection
    ) -> tuple[FileChange, ...]:
        """Undo / reapply is a user action: never while a turn runs (tools.md §8)."""
        self._require_idle()
        return await apply_recorded_changes(
            store,
            self.session_id,
            self._services.toolset.registry_tools.session,
            self._mode,
            change_ids,
            direction,
        )

    async def _set_mode(self, mode: SandboxMode) -> None:
        await self._store.set_sandbox_mode(self.session_id, mode)
        self._mode = mode

    async def _snapshot(self) -> SessionSnapshot:
        runtime = self._runtime
        if isinstance(runtime, RunningRuntime):
            runtime = RunningRuntime(
                turnId=runtime.turnId,
                clientRequestId=runtime.clientRequestId,
                phase=runtime.phase,
                draftText=runtime.draftText,
                draftReasoning=runtime.draftReasoning,
                toolCalls=list(runtime.toolCalls),
                pendingPermission=runtime.pendingPermission,
                plan=runtime.plan,
            )
        return SessionSnapshot(
            sessionId=self.session_id,
            lastUpdateSequence=self._hub.last_sequence,
            permissionMode=self._mode,
            sandbox=sandbox_view(self._sandbox),
            runtime=runtime,
        )

    async def _subscribe(self, after_sequence: int | None) -> tuple[Replay, Subscription]:
        subscription = self._hub.subscribe()
        if after_sequence is None:
            return Replay((), False), subscription
        return self._hub.replay(after_sequence), subscription

    async def _active_turn_id(self) -> str | None:
        return None if self._active is None else self._active.turn_id

    async def shutdown(self) -> None:
        """Cancel the active turn (outcome cancelled), wait for it, stop the loop."""
        if self._task is None or self._task.done():
            return
        active = self._active
        if active is not None:
            active.cancel.set()
            if active.task is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait({active.task}, timeout=8)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(2):
                    await self._idle.wait()
        await self._queue.put(None)
        await self._task
        await self._services.chat.stop()
