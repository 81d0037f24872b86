"""SessionSnapshot: the actor's in-memory view for (re)connecting clients (session-runtime.md §8).

The actor folds every update it emits into a ``RuntimeView``; the snapshot is never stored and
never used for restart recovery."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal, TypeAlias

from pydantic import JsonValue

from openwork_core.session.updates import (
    SESSION_UPDATE_VERSION,
    DraftCleared,
    LiveToolCall,
    PermissionRequested,
    PermissionResolved,
    PhaseChanged,
    PlanUpdated,
    ReasoningDeltaUpdate,
    SessionPhase,
    SessionUpdateEnvelope,
    TextDeltaUpdate,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
)
from openwork_core.storage.records import SessionRecord, TurnRecord
from openwork_tools.modes import SandboxMode, SandboxStatus


@dataclass(frozen=True, slots=True, kw_only=True)
class IdleRuntime:
    state: Literal["idle"] = "idle"


@dataclass(slots=True, kw_only=True)
class RunningRuntime:
    state: Literal["running"] = "running"
    turnId: str
    clientRequestId: str
    phase: SessionPhase = SessionPhase.STARTING
    draftText: str = ""
    draftReasoning: str = ""
    toolCalls: list[LiveToolCall] = field(default_factory=list)
    pendingPermission: JsonValue = None
    plan: JsonValue = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TerminalRuntime:
    state: Literal["terminal"] = "terminal"
    turnId: str
    clientRequestId: str
    outcome: JsonValue
    plan: JsonValue = None


Runtime: TypeAlias = IdleRuntime | RunningRuntime | TerminalRuntime


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxView:
    state: Literal["available", "unavailable"]
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSnapshot:
    version: int = SESSION_UPDATE_VERSION
    sessionId: str
    lastUpdateSequence: int
    permissionMode: SandboxMode
    sandbox: SandboxView
    runtime: Runtime


def sandbox_view(status: SandboxStatus) -> SandboxView:
    if status.available:
        return SandboxView(state="available")
    return SandboxView(state="unavailable", reason=status.reason)


def fold(runtime: Runtime, envelope: SessionUpdateEnvelope) -> Runtime:
    """Apply one update to the runtime view (progress chunks are never folded)."""
    update = envelope.update
    if isinstance(update, TurnStarted):
        return RunningRuntime(turnId=envelope.turnId or "", clientRequestId=update.clientRequestId)
    if not isinstance(runtime, RunningRuntime):
        return runtime
    match update:
        case PhaseChanged(phase=phase):
            runtime.phase = phase
        case TextDeltaUpdate(delta=delta):
            runtime.draftText += delta
        case ReasoningDeltaUpdate(delta=delta):
            runtime.draftReasoning += delta
        case DraftCleared():
            runtime.draftText = ""
            runtime.draftReasoning = ""
        case ToolCallStarted(toolCall=call):
            runtime.toolCalls.append(call)
        case ToolCallFinished() as done:
            runtime.toolCalls = [
                replace(
                    c,
                    status=done.status,
                    output=done.output,
                    isError=done.isError,
                    artifacts=done.artifacts,
                )
                if c.toolCallId == done.toolCallId
                else c
                for c in runtime.toolCalls
            ]
        case PermissionRequested(request=request):
            runtime.pendingPermission = request
        case PermissionResolved():
            runtime.pendingPermission = None
        case PlanUpdated() as plan:
            runtime.plan = {
                "explanation": plan.explanation,
                "steps": plan.plan,
                "updatedAt": plan.updatedAt,
            }
        case TurnFinished(outcome=outcome):
            return TerminalRuntime(
                turnId=runtime.turnId,
                clientRequestId=runtime.clientRequestId,
                outcome=outcome,
                plan=runtime.plan,
            )
        case _:
            pass
    return runtime


def stored_snapshot(
    record: SessionRecord, running: TurnRecord | None, sandbox: SandboxView
) -> SessionSnapshot:
    """A session that is not loaded here, from the database: idle, or a turn running (in another
    daemon, or left over until its owner's lease expires). No live update sequence."""
    runtime: Runtime = IdleRuntime()
    if running is not None:
        runtime = RunningRuntime(turnId=running.id, clientRequestId=running.client_request_id)
    return SessionSnapshot(
        sessionId=record.id,
        lastUpdateSequence=0,
        permissionMode=record.sandbox_mode,
        sandbox=sandbox,
        runtime=runtime,
    )
