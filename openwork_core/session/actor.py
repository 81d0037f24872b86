"""SessionActor: one per active session. It owns the active turn, the live update stream and the
snapshot; the runner task does the turn's work and reports back (session-runtime.md §1–§2).

The actor is one loop over its ``CommandQueue``: one ``match`` on the command union of
``session/commands.py``. Callers hold a ``SessionHandle`` (the queue only). The actor owns its
turn's task, and the task of a manual compaction or a rewind (the loop never waits on a model
call: issue 23 point 7): it cancels them through their ``TurnCancellation`` and awaits them when
stopping — or when its loop crashed, before the registry builds a new actor.

Slightly over the 400-line soft limit on purpose: the loop, its one ``match`` and the handler of
each command are read together; the idle-only actions live in ``maintenance.py``, the turn end
repair in ``repair.py``."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar, assert_never

import structlog

from openwork_chat_state.item import ConversationItem
from openwork_core.agents.control import TurnSlot
from openwork_core.context.inspection import ContextInspection, build_context_inspection
from openwork_core.context.limits import ModelContextLimits
from openwork_core.ids import (
    ClientRequestId,
    SessionId,
    ToolCallId,
    TurnId,
)
from openwork_core.session.approval import PermissionDecision
from openwork_core.session.commands import (
    ApplyFileChanges,
    CancelTurn,
    CommandQueue,
    Compact,
    CompactionEnded,
    DeliverAgentMessage,
    GetSnapshot,
    GetStatus,
    InspectContext,
    ResolvePermission,
    RevertTurns,
    Rewind,
    SessionCommand,
    SessionStatus,
    SetPermissionMode,
    StartTurn,
    SteerTurn,
    Stop,
    Subscribe,
    SwitchModel,
    TurnEnded,
    settle,
)
from openwork_core.session.compaction.run import CompactionResult
from openwork_core.session.errors import (
    ActorStopped,
    Busy,
    ReloadRequired,
    SessionActive,
    TurnNotActive,
    TurnNotRecorded,
)
from openwork_core.session.handle import SessionHandle
from openwork_core.session.maintenance import manual_compaction, rewind_to, undo_or_reapply
from openwork_core.session.outcome import (
    Cancelled,
    Failed,
    FailureCode,
    TurnCancelled,
    TurnOutcome,
)
from openwork_core.session.repair import TurnEndRepair
from openwork_core.session.revert import RevertResult, RevertStore, revert_turns, unrevert
from openwork_core.session.runner.cancellation import TurnCancellation
from openwork_core.session.runner.context import (
    ModelSwitchSlot,
    PermissionModeView,
    ResolvedModel,
    SessionServices,
    TurnContext,
    TurnSpec,
)
from openwork_core.session.runner.permission import PermissionSlot
from openwork_core.session.runner.prepare import prepare_call, system_context, turn_opening
from openwork_core.session.runner.steering import (
    Steer,
    SteerAccepted,
    SteerInbox,
    SteerTarget,
    accept_steer,
)
from openwork_core.session.runner.turn import TurnRunner
from openwork_core.session.runner.usage_step import inspection_usage
from openwork_core.session.snapshot import (
    IdleRuntime,
    RunningRuntime,
    Runtime,
    SessionSnapshot,
    fold,
    sandbox_view,
)
from openwork_core.session.storage import (
    TurnClosing,
    committed_all,
)
from openwork_core.session.turn_accepted import TurnAccepted
from openwork_core.session.update_streams import SessionReplay, Subscription, UpdateHub
from openwork_core.session.updates import (
    SessionUpdate,
    StreamEndReason,
    TurnFinished,
    TurnStarted,
    UsageBody,
)
from openwork_core.storage.compaction_records import CompactionKind
from openwork_core.usage import TokenUsage
from openwork_tools.faults import faultpoint
from openwork_tools.modes import SandboxMode, SandboxStatus
from openwork_tools.results import FileChange
from openwork_tools.undo import ChangeDirection

log = structlog.get_logger(__name__)
T = TypeVar("T")
_QUEUE_CAPACITY = 64
_STOP_TURN_GRACE_S = 8.0
"""How long a stopping actor waits for its cancelled turn (or compaction) to end before
cancelling its task."""


TurnFinishedHook = Callable[[TurnId, TurnOutcome], Awaitable[None]]
"""Called by the actor with ``(turn_id, outcome)`` after a Turn ended and the session is idle
again: a sub-agent reports its outcome to its parent here (multi-agent.md §6, no watcher)."""


@dataclass(slots=True)
class _ActiveTurn:
    turn_id: TurnId
    client_request_id: ClientRequestId
    cancellation: TurnCancellation
    permission: PermissionSlot
    mode: PermissionModeView
    slot: TurnSlot | None
    task: asyncio.Task[None] | None = None
    steering: SteerInbox = dataclasses.field(default_factory=SteerInbox)
    next_model: ModelSwitchSlot = dataclasses.field(default_factory=ModelSwitchSlot)


@dataclass(slots=True)
class _ActiveCompaction:
    """A manual compaction or a rewind the actor runs as its own task."""

    kind: CompactionKind
    cancellation: TurnCancellation
    task: asyncio.Task[None]


class SessionActor:
    def __init__(
        self,
        *,
        session_id: SessionId,
        services: SessionServices,
        hub: UpdateHub,
        mode: SandboxMode,
        sandbox: SandboxStatus,
        on_turn_finished: TurnFinishedHook | None = None,
    ) -> None:
        self._session_id = session_id
        self._on_turn_finished = on_turn_finished
        self._services = services
        self._hub = hub
        self._mode = mode
        self._sandbox = sandbox
        self._runtime: Runtime = IdleRuntime()
        self._active: _ActiveTurn | None = None
        self._compaction: _ActiveCompaction | None = None
        self._accepted: dict[ClientRequestId, TurnId] = {}
        self._queue: CommandQueue | None = None
        self._repair = TurnEndRepair(services.storage)

    def spawn(self) -> SessionHandle:
        """Start the loop; the returned handle is the only way in."""
        queue = CommandQueue(_QUEUE_CAPACITY)
        self._queue = queue
        task = asyncio.get_running_loop().create_task(
            self._run(queue), name=f"session-{self._session_id}"
        )
        task.add_done_callback(_log_crash)
        return SessionHandle(self._session_id, queue)

    # -- the loop --------------------------------------------------------------------------
    async def _run(self, queue: CommandQueue) -> None:
        # every log line of this session's work (turns, compaction, rewind, undo) names it
        structlog.contextvars.clear_contextvars()  # not the ids of a parent's turn
        structlog.contextvars.bind_contextvars(session_id=self._session_id)
        reason = StreamEndReason.UNLOADED
        try:
            while True:
                command = await queue.receive()
                if isinstance(command, Stop):
                    reason = command.reason
                    await self._stop()
                    command.reply.set_result(None)
                    return
                await self._dispatch(command)
        except BaseException:
            await self._stop()  # a crashed loop still ends the work it owns (issue 22 point 7)
            raise
        finally:
            for left in queue.close():
                await self._refuse(left)
            self._hub.end(reason)  # the last update: after what the stopped turn reported
            await self._services.chat.stop()
            if not queue.stopped.done():
                queue.stopped.set_result(None)

    async def _dispatch(self, command: SessionCommand) -> None:
        match command:
            case StartTurn(spec=spec, reply=reply):
                await settle(reply, self._start_turn(spec))
            case SteerTurn(steer=steer, reply=reply):
                await settle(reply, self._steer(steer))
            case CancelTurn(turn_id=turn_id, reply=reply):
                await settle(reply, self._cancel_turn(turn_id))
            case ResolvePermission(turn_id=turn_id, tool_call_id=call_id, decision=decision):
                await settle(command.reply, self._resolve_permission(turn_id, call_id, decision))
            case SetPermissionMode(mode=mode, reply=reply):
                await settle(reply, self._set_mode(mode))
            case SwitchModel(model=model, reply=reply):
                await settle(reply, self._switch_model(model))
            case ApplyFileChanges(change_ids=change_ids, direction=direction, reply=reply):
                await settle(reply, self._file_changes(change_ids, direction))
            case RevertTurns(turn_id=turn_id, store=store, reply=reply):
                await settle(reply, self._revert(turn_id, store))
            case Compact(model=model, reply=reply):
                self._own_compaction(
                    CompactionKind.MANUAL,
                    reply,
                    lambda c: manual_compaction(self._session_id, self._services, model, c),
                )
            case Rewind(compaction_id=compaction_id, model=model, reply=reply):
                self._own_compaction(
                    CompactionKind.REWIND,
                    reply,
                    lambda _: rewind_to(self._session_id, self._services, compaction_id, model),
                )
            case InspectContext(model=model, reply=reply):
                await settle(reply, self._inspect(model))
            case GetSnapshot(reply=reply):
                await settle(reply, self._snapshot())
            case Subscribe(after_sequence=after, reply=reply):
                await settle(reply, self._subscribe(after))
            case GetStatus(reply=reply):
                await settle(reply, self._status())
            case DeliverAgentMessage(message=message):
                if not self._services.mailbox.deliver(message):
                    log.info("agent_message.duplicate_dropped", message_id=message.id)
            case TurnEnded(turn_id=turn_id, outcome=outcome, unwritten=unwritten, usage=usage):
                await self._turn_ended(turn_id, outcome, unwritten, usage)
            case CompactionEnded():
                self._compaction = None
                command.answer()
            case Stop():
                raise AssertionError("Stop is handled by the loop")
            case _:
                assert_never(command)

    async def _refuse(self, command: SessionCommand) -> None:
        """A command the stopped actor will not run: asks answer ActorStopped; a turn's end is
        still reported (its outcome stands)."""
        if isinstance(command, TurnEnded):
            await self._turn_ended(command.turn_id, command.outcome, command.unwritten)
        elif isinstance(command, CompactionEnded):
            command.answer()
        elif isinstance(command, DeliverAgentMessage):
            log.warning("agent_message.actor_stopped", message_id=command.message.id)
        elif not command.reply.done():
            command.reply.set_exception(ActorStopped())

    # -- updates -----------------------------------------------------------------------------
    def _emit(self, turn_id: TurnId | None, update: SessionUpdate) -> None:
        envelope = self._hub.emit(turn_id, update)
        self._runtime = fold(self._runtime, envelope)

    # -- turns -------------------------------------------------------------------------------
    async def _start_turn(self, spec: TurnSpec) -> TurnAccepted:
        if self._services.compaction_history.reload_required:
            raise ReloadRequired()
        known = self._accepted.get(spec.client_request_id)
        if known is None:
            known = await self._services.storage.turn_for_client_request(spec.client_request_id)
        if known is not None:
            return TurnAccepted(known, spec.client_request_id)
        if self._active is not None:
            raise Busy(self._active.turn_id)
        if self._compaction is not None:
            raise SessionActive(self._compaction.kind)
        assert self._queue is not None
        if not await self._repair.flush():
            raise TurnNotRecorded("the previous turn's end is not written yet; retry")
        opened = await self._open_turn(spec)
        faultpoint("turn_row_committed")
        toolset = self._services.toolset.refreshed()  # MCP servers changed: at this boundary
        if toolset is not self._services.toolset:
            self._services = dataclasses.replace(self._services, toolset=toolset)
        active = _ActiveTurn(
            turn_id=spec.turn_id,
            client_request_id=spec.client_request_id,
            cancellation=TurnCancellation(),
            permission=PermissionSlot(),
            mode=PermissionModeView(self._mode),
            slot=spec.turn_slot,
        )
        self._active = active
        self._accepted[spec.client_request_id] = spec.turn_id
        self._emit(spec.turn_id, TurnStarted(client_request_id=spec.client_request_id))
        runner = TurnRunner(
            TurnContext(
                spec=spec,
                services=self._services,
                emit=lambda u: self._emit(spec.turn_id, u),
                cancellation=active.cancellation,
                permission=active.permission,
                mode=active.mode,
                opened=opened,
                steering=active.steering,
                next_model=active.next_model,
            )
        )
        active.task = asyncio.get_running_loop().create_task(
            self._drive(self._queue, spec.turn_id, runner), name=f"turn-{spec.turn_id}"
        )
        return TurnAccepted(spec.turn_id, spec.client_request_id)

    async def _open_turn(self, spec: TurnSpec) -> tuple[ConversationItem, ...]:
        """Acknowledged = durable: the turn row and the user's input messages commit before the
        turn is accepted; a failure accepts nothing (``TurnNotRecorded``)."""
        opening, rows = turn_opening(spec, self._services.app_version)
        try:
            origins = await self._services.storage.start_turn(opening, rows)
        except Exception as exc:
            log.error("turn.persist_failed", step="turn_start", error=str(exc))
            raise TurnNotRecorded(str(exc)) from exc
        return tuple(committed_all(rows, origins))

    async def _drive(self, queue: CommandQueue, turn_id: TurnId, runner: TurnRunner) -> None:
        """The turn's task: run the loop, then hand the outcome back to the actor's loop."""
        outcome: TurnOutcome
        try:
            outcome = await runner.run()
        except asyncio.CancelledError:  # the stopping actor gave up waiting: report, re-raise
            queue.post_nowait(TurnEnded(turn_id, Cancelled()))
            raise
        except Exception as exc:
            log.error("turn.runner_crashed", error=repr(exc))
            outcome = Failed(FailureCode.ACTOR_STOPPED, f"the turn runner crashed: {exc!r}")
        await _post_ended(
            queue, TurnEnded(turn_id, outcome, runner.unwritten_closing, runner.usage)
        )

    async def _turn_ended(
        self,
        turn_id: TurnId,
        outcome: TurnOutcome,
        unwritten: TurnClosing | None = None,
        usage: TokenUsage | None = None,
    ) -> None:
        active = self._active
        if active is None or active.turn_id != turn_id:
            return
        if unwritten is not None:  # an outage kept the terminal state out of the database
            self._repair.hold(turn_id, unwritten)
        if active.slot is not None:
            active.slot.release()  # however the Turn ended (multi-agent.md §7)
        body = None if usage is None else UsageBody.of(usage)
        self._emit(turn_id, TurnFinished(outcome=outcome, usage=body))
        self._active = None
        if self._on_turn_finished is not None:
            try:
                await self._on_turn_finished(turn_id, outcome)
            except Exception as exc:  # the outcome stands; the hook only reports it
                log.warning("turn.finished_hook_failed", error=repr(exc))

    def _require_turn(self, turn_id: TurnId) -> _ActiveTurn:
        if self._active is None or self._active.turn_id != turn_id:
            raise TurnNotActive(turn_id, None if self._active is None else self._active.turn_id)
        return self._active

    async def _steer(self, steer: Steer) -> SteerAccepted:
        """Issue 26 point 1: input for the running turn, committed before the reply."""
        active = self._active
        target = (
            None if active is None else SteerTarget(turn_id=active.turn_id, inbox=active.steering)
        )
        services = self._services
        return await accept_steer(
            services.steers,
            services.storage,
            services.chat,
            steer,
            target,
            lambda u: self._emit(steer.accepted.turn_id, u),
        )

    async def _cancel_turn(self, turn_id: TurnId) -> None:
        self._require_turn(turn_id).cancellation.request()

    async def _resolve_permission(
        self, turn_id: TurnId, tool_call_id: ToolCallId, decision: PermissionDecision
    ) -> None:
        self._require_turn(turn_id).permission.resolve(tool_call_id, decision)

    async def _set_mode(self, mode: SandboxMode) -> None:
        await self._services.storage.set_sandbox_mode(mode)
        self._mode = mode
        if self._active is not None:  # effective from the next tool call (§1)
            self._active.mode.current = mode

    async def _switch_model(self, model: ResolvedModel) -> None:
        if self._active is not None:  # from its next model call (issue 26 point 4)
            self._active.next_model.pending = model

    # -- idle-only work ------------------------------------------------------------------------
    def _require_idle(self) -> None:
        if self._active is not None:
            raise SessionActive(self._active.turn_id)
        if self._compaction is not None:
            raise SessionActive(self._compaction.kind)

    def _own_compaction(
        self,
        kind: CompactionKind,
        reply: asyncio.Future[CompactionResult],
        work: Callable[[TurnCancellation], Awaitable[CompactionResult]],
    ) -> None:
        """Start a manual compaction or a rewind as the actor's own task, like a turn's: the loop
        goes on answering status, snapshots and subscriptions while it runs; turns, undo and
        other compactions are refused (``session_active``) until it ended (issue 23 point 7)."""
        try:
            self._require_idle()
        except SessionActive as refused:
            reply.set_exception(refused)
            return
        assert self._queue is not None
        cancellation = TurnCancellation()
        task = asyncio.get_running_loop().create_task(
            _drive_compaction(self._queue, reply, work(cancellation)),
            name=f"{kind.value}-compaction-{self._session_id}",
        )
        self._compaction = _ActiveCompaction(kind, cancellation, task)

    async def _revert(self, turn_id: TurnId | None, store: RevertStore) -> RevertResult:
        """Issue 26 point 3: a user action on the Conversation, never while a turn runs."""
        self._require_idle()
        if turn_id is None:
            return await unrevert(self._session_id, self._services, self._mode, store)
        return await revert_turns(self._session_id, self._services, self._mode, store, turn_id)

    async def _file_changes(
        self, change_ids: tuple[str, ...], direction: ChangeDirection
    ) -> tuple[FileChange, ...]:
        """Undo / reapply is a user action: never while a turn runs (tools.md §8)."""
        self._require_idle()
        return await undo_or_reapply(
            self._session_id, self._services, self._mode, change_ids, direction
        )

    # -- reads ---------------------------------------------------------------------------------
    async def _inspect(self, model: ResolvedModel) -> ContextInspection:
        """The runner's own prepare, without sampling World State or calling a provider."""
        prepared = await prepare_call(self._services, model, system_context(self._services))
        return build_context_inspection(
            prepared,
            ModelContextLimits.from_capabilities(model.capabilities),
            await inspection_usage(self._services.storage),
            self._services.toolset.mcp,
        )

    async def _snapshot(self) -> SessionSnapshot:
        runtime = self._runtime
        if isinstance(runtime, RunningRuntime):
            runtime = dataclasses.replace(runtime, tool_calls=list(runtime.tool_calls))
        return SessionSnapshot(
            session_id=self._session_id,
            last_update_sequence=self._hub.last_sequence,
            permission_mode=self._mode,
            sandbox=sandbox_view(self._sandbox),
            runtime=runtime,
        )

    async def _subscribe(self, after_sequence: int | None) -> tuple[SessionReplay, Subscription]:
        return self._hub.subscribe_after(after_sequence)

    async def _status(self) -> SessionStatus:
        active = self._active
        return SessionStatus(
            active_turn_id=None if active is None else active.turn_id,
            permission_mode=self._mode,
            reload_required=self._services.compaction_history.reload_required,
            pending_permission=active is not None and active.permission.pending,
            unwritten_turn_id=self._repair.turn_id,
            watchers=self._hub.subscriber_count,
            compaction=None if self._compaction is None else self._compaction.kind,
        )

    # -- stopping --------------------------------------------------------------------------------
    async def _stop(self) -> None:
        """Cancel the active turn (outcome cancelled) and a running compaction, and wait for
        their tasks; what they posted on their way out is handled before the loop ends."""
        await self._repair.stop()
        owned = [
            (work.cancellation, work.task)
            for work in (self._active, self._compaction)
            if work is not None and work.task is not None
        ]
        for cancellation, _ in owned:
            cancellation.request()
        tasks = {task for _, task in owned}
        if not tasks:
            return
        _, late = await asyncio.wait(tasks, timeout=_STOP_TURN_GRACE_S)
        for task in late:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def _log_crash(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("session.actor_crashed", error=repr(task.exception()))


async def _post_ended(queue: CommandQueue, ended: TurnEnded) -> None:
    with contextlib.suppress(ActorStopped):  # a stopped actor reports queued ends itself
        await queue.post(ended)


async def _drive_compaction(
    queue: CommandQueue, reply: asyncio.Future[CompactionResult], work: Awaitable[CompactionResult]
) -> None:
    """A compaction's task: run it, then hand its result back to the actor's loop, which
    answers the caller once the session is idle again."""
    try:
        ended = CompactionEnded(reply, await work)
    except asyncio.CancelledError:  # the stopping actor gave up waiting
        if not queue.post_nowait(CompactionEnded(reply, ActorStopped())):
            CompactionEnded(reply, ActorStopped()).answer()
        raise
    except TurnCancelled:  # the stopping actor ended its summary call
        ended = CompactionEnded(reply, ActorStopped())
    except Exception as exc:  # the caller's answer: 502 with the compaction's code, 409, 404
        ended = CompactionEnded(reply, exc)
    try:
        await queue.post(ended)
    except ActorStopped:  # the loop ended without it: the caller still gets its answer
        ended.answer()
