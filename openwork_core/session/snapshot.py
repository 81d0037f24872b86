"""SessionSnapshot: the actor's in-memory view for (re)connecting clients (session-runtime.md §8).

The actor folds every update it emits into a ``RuntimeView``; the snapshot is never stored and
never used for restart recovery."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Literal, TypeAlias, assert_never

from openwork_core.ids import ClientRequestId, SessionId, TurnId
from openwork_core.session.approval import PermissionRequest
from openwork_core.session.outcome import TurnOutcome
from openwork_core.session.updates import (
    SESSION_UPDATE_VERSION,
    ContextUpdated,
    DraftCleared,
    LiveToolCall,
    PermissionRequested,
    PermissionResolved,
    PhaseChanged,
    PlanUpdated,
    PlanView,
    ReasoningDeltaUpdate,
    Resync,
    SessionPhase,
    SessionUpdateEnvelope,
    StreamEnded,
    TextDeltaUpdate,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
    TurnSteered,
    WarningRaised,
)
from openwork_core.storage.records import SessionRecord, TurnRecord
from openwork_tools.modes import SandboxMode, SandboxStatus


class RuntimeState(enum.StrEnum):
    """The snapshot's ``runtime.state``: no turn yet, a turn running, the last turn ended."""

    IDLE = "idle"
    RUNNING = "running"
    TERMINAL = "terminal"


class SandboxState(enum.StrEnum):
    AVAILABLE = "available"
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True, slots=True, kw_only=True)
class IdleRuntime:
    state: Literal[RuntimeState.IDLE] = RuntimeState.IDLE


@dataclass(slots=True, kw_only=True)
class RunningRuntime:
    state: Literal[RuntimeState.RUNNING] = RuntimeState.RUNNING
    turn_id: TurnId
    client_request_id: ClientRequestId
    phase: SessionPhase = SessionPhase.STARTING
    draft_text: str = ""
    draft_reasoning: str = ""
    tool_calls: list[LiveToolCall] = field(default_factory=list)
    pending_permission: PermissionRequest | None = None
    plan: PlanView | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TerminalRuntime:
    state: Literal[RuntimeState.TERMINAL] = RuntimeState.TERMINAL
    turn_id: TurnId
    client_request_id: ClientRequestId
    outcome: TurnOutcome
    plan: PlanView | None = None


Runtime: TypeAlias = IdleRuntime | RunningRuntime | TerminalRuntime


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxView:
    state: Literal[SandboxState.AVAILABLE, SandboxState.UNAVAILABLE]
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSnapshot:
    version: int = SESSION_UPDATE_VERSION
    session_id: SessionId
    last_update_sequence: int
    permission_mode: SandboxMode
    sandbox: SandboxView
    runtime: Runtime


def sandbox_view(status: SandboxStatus) -> SandboxView:
    if status.available:
        return SandboxView(state=SandboxState.AVAILABLE)
    return SandboxView(state=SandboxState.UNAVAILABLE, reason=status.reason)


def fold(runtime: Runtime, envelope: SessionUpdateEnvelope) -> Runtime:
    """Apply one update to the runtime view (progress chunks are never folded)."""
    update = envelope.update
    if isinstance(update, TurnStarted):
        return RunningRuntime(
            turn_id=envelope.turn_id or TurnId(""), client_request_id=update.client_request_id
        )
    if not isinstance(runtime, RunningRuntime):
        return runtime
    match update:
        case PhaseChanged(phase=phase):
            runtime.phase = phase
        case TextDeltaUpdate(delta=delta):
            runtime.draft_text += delta
        case ReasoningDeltaUpdate(delta=delta):
            runtime.draft_reasoning += delta
        case DraftCleared():
            runtime.draft_text = ""
            runtime.draft_reasoning = ""
        case ToolCallStarted(tool_call=call):
            runtime.tool_calls.append(call)
        case ToolCallFinished() as done:
            runtime.tool_calls = [
                replace(
                    c,
                    status=done.status,
                    output=done.output,
                    is_error=done.is_error,
                    artifacts=done.artifacts,
                )
                if c.tool_call_id == done.tool_call_id
                else c
                for c in runtime.tool_calls
            ]
        case PermissionRequested(request=request):
            runtime.pending_permission = request
        case PermissionResolved():
            runtime.pending_permission = None
        case PlanUpdated() as plan:
            runtime.plan = plan.view
        case TurnFinished(outcome=outcome):
            return TerminalRuntime(
                turn_id=runtime.turn_id,
                client_request_id=runtime.client_request_id,
                outcome=outcome,
                plan=runtime.plan,
            )
        case (
            ToolCallProgress()
            | ContextUpdated()
            | WarningRaised()
            | TurnSteered()
            | Resync()
            | StreamEnded()
        ):
            pass
        case _:
            assert_never(update)
    return runtime


def stored_snapshot(
    record: SessionRecord,
    running: TurnRecord | None,
    sandbox: SandboxView,
    *,
    last_update_sequence: int,
) -> SessionSnapshot:
    """A session that is not loaded here, from the database: idle, or a turn running (in another
    daemon, or left over until its owner's lease expires). ``last_update_sequence`` is where the
    next owner's updates start after (what a freshly loaded actor would answer)."""
    runtime: Runtime = IdleRuntime()
    if running is not None:
        runtime = RunningRuntime(turn_id=running.id, client_request_id=running.client_request_id)
    return SessionSnapshot(
        session_id=record.id,
        last_update_sequence=last_update_sequence,
        permission_mode=record.sandbox_mode,
        sandbox=sandbox,
        runtime=runtime,
    )
