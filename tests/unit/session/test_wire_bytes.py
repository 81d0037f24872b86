"""The bytes of session updates and snapshots on the wire (session-runtime.md §7, §8; daemon-api.md
§2, §4): the SSE ``data`` of each update type, the ``permission_requested`` card and the snapshot of
``GET /v1/sessions/{sid}`` are pinned byte for byte, so renaming domain attributes cannot change
what a client reads."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from openwork_core.ids import TurnId
from openwork_core.plan.model import PlanStep, PlanStepStatus, TurnPlan
from openwork_core.session.approval import ApprovalCard, CardDanger, CardPath, PathTier
from openwork_core.session.approval import PermissionRequest as Card
from openwork_core.session.outcome import Cancelled, Completed, Failed, FailureCode
from openwork_core.session.snapshot import (
    IdleRuntime,
    PlanView,
    RunningRuntime,
    SandboxView,
    SessionSnapshot,
    TerminalRuntime,
)
from openwork_core.session.updates import (
    ContextUpdated,
    DraftCleared,
    LiveToolCall,
    PermissionRequested,
    PermissionResolved,
    PhaseChanged,
    PlanUpdated,
    ReasoningDeltaUpdate,
    Resync,
    SessionPhase,
    SessionUpdate,
    SessionUpdateEnvelope,
    TextDeltaUpdate,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    ToolProgress,
    TurnFinished,
    TurnStarted,
    UsageBody,
)
from openwork_core.session.wire import wire_json
from openwork_tools.modes import SandboxMode
from openwork_tools.policy import Access, GrantScope


def _envelope(update: SessionUpdate, turn_id: str | None = "turn_1") -> bytes:
    return wire_json(
        SessionUpdateEnvelope(
            session_id="ses_1", turn_id=turn_id, sequence=7, occurred_at_ms=1700, update=update
        )
    )


def _head(turn: str = '"turn_1"') -> str:
    return f'{{"version":7,"sessionId":"ses_1","turnId":{turn},"sequence":7,"occurredAtMs":1700,'


def test_turn_and_text_updates_keep_their_camel_case_bytes() -> None:
    """§7: turn_started, phase_changed, deltas and draft_cleared as the protocol spells them."""
    assert (
        _envelope(TurnStarted(client_request_id="req_1"))
        == (_head() + '"update":{"type":"turn_started","clientRequestId":"req_1"}}').encode()
    )
    assert (
        _envelope(PhaseChanged(phase=SessionPhase.RUNNING_MODEL))
        == (_head() + '"update":{"type":"phase_changed","phase":"running_model"}}').encode()
    )
    assert (
        _envelope(TextDeltaUpdate(delta="hé"))
        == (_head() + '"update":{"type":"text_delta","delta":"hé"}}').encode()
    )
    assert (
        _envelope(ReasoningDeltaUpdate(delta="r"))
        == (_head() + '"update":{"type":"reasoning_delta","delta":"r"}}').encode()
    )
    assert _envelope(DraftCleared()) == (_head() + '"update":{"type":"draft_cleared"}}').encode()
    assert (
        _envelope(Resync(), turn_id=None)
        == (_head("null") + '"update":{"type":"resync"}}').encode()
    )


def test_tool_call_updates_keep_their_camel_case_bytes() -> None:
    """§7: tool_call_started / _progress / _finished with camelCase ids and flags."""
    call = LiveToolCall(
        tool_call_id="tc_1",
        provider_call_id="call_9",
        name="read",
        input={"path": "a"},
        status="running",
    )
    assert (
        _envelope(ToolCallStarted(tool_call=call))
        == (
            _head() + '"update":{"type":"tool_call_started","toolCall":{"toolCallId":"tc_1",'
            '"providerCallId":"call_9","name":"read","input":{"path":"a"},"status":"running",'
            '"output":null,"isError":null,"artifacts":null}}}'
        ).encode()
    )
    progress = ToolCallProgress(
        tool_call_id="tc_1", progress=ToolProgress(kind="stdout", chunk="x")
    )
    assert (
        _envelope(progress)
        == (
            _head() + '"update":{"type":"tool_call_progress","toolCallId":"tc_1",'
            '"progress":{"kind":"stdout","chunk":"x","message":null}}}'
        ).encode()
    )
    finished = ToolCallFinished(
        tool_call_id="tc_1",
        provider_call_id="call_9",
        tool_name="read",
        status="succeeded",
        output="ok",
        is_error=False,
        artifacts=[{"kind": "file_change", "changeId": "c1"}],
    )
    assert (
        _envelope(finished)
        == (
            _head() + '"update":{"type":"tool_call_finished","toolCallId":"tc_1",'
            '"providerCallId":"call_9","toolName":"read","status":"succeeded","output":"ok",'
            '"isError":false,"artifacts":[{"kind":"file_change","changeId":"c1"}]}}'
        ).encode()
    )


def test_permission_plan_and_context_updates_keep_their_camel_case_bytes() -> None:
    """§7 and permissions-sandbox.md §5: the card, the answer, the plan and the budget."""
    card = ApprovalCard(
        mode=SandboxMode.AUTO,
        command="rm -rf x",
        justification="clean",
        paths=(
            CardPath(
                path="/w/x",
                access=Access.WRITE,
                scope=GrantScope.SUBTREE,
                tier=PathTier.NORMAL,
                in_workspace=True,
            ),
        ),
        danger=CardDanger(key="rm_recursive", start=0, end=6),
        previous_denial="no",
    )
    request = Card(
        session_id="ses_1",
        turn_id="turn_1",
        tool_call_id="tc_1",
        provider_call_id="call_9",
        tool_name="bash",
        card=card,
    )
    assert (
        _envelope(PermissionRequested(request=request))
        == (
            _head() + '"update":{"type":"permission_requested","request":{"sessionId":"ses_1",'
            '"turnId":"turn_1","toolCallId":"tc_1","providerCallId":"call_9","toolName":"bash",'
            '"card":{"mode":"auto","command":"rm -rf x","justification":"clean","paths":[{"path":'
            '"/w/x","access":"write","scope":"subtree","tier":"normal","inWorkspace":true}],'
            '"danger":{"key":"rm_recursive","start":0,"end":6},"previousDenial":"no"}}}}'
        ).encode()
    )
    assert (
        _envelope(PermissionResolved(tool_call_id="tc_1", decision="deny"))
        == (
            _head()
            + '"update":{"type":"permission_resolved","toolCallId":"tc_1","decision":"deny"}}'
        ).encode()
    )
    plan = PlanUpdated.of(
        TurnPlan(
            turn_id=TurnId("t"),
            explanation=None,
            steps=(PlanStep(step="a", status=PlanStepStatus.PENDING),),
            updated_at=datetime(2026, 1, 1, 8, tzinfo=timezone(timedelta(hours=8))),
        )
    )
    assert (
        _envelope(plan)
        == (
            _head() + '"update":{"type":"plan_updated","explanation":null,'
            '"steps":[{"step":"a","status":"pending"}],"updatedAt":"2026-01-01T00:00:00Z",'
            '"plan":[{"step":"a","status":"pending"}]}}'
        ).encode()
    ), "one plan shape (steps) and the spec's plan; RFC 3339 UTC with Z"
    context = ContextUpdated(
        system_context_tokens=1,
        conversation_tokens=2,
        tool_surface_tokens=3,
        estimated_input_tokens=6,
        reserved_output_tokens=4,
        auto_compact_percent=90.0,
    )
    assert (
        _envelope(context)
        == (
            _head() + '"update":{"type":"context_updated","systemContextTokens":1,'
            '"conversationTokens":2,"toolSurfaceTokens":3,"estimatedInputTokens":6,'
            '"reservedOutputTokens":4,"autoCompactPercent":90.0}}'
        ).encode()
    )


def test_turn_finished_outcomes_keep_their_bytes() -> None:
    """session-runtime.md §3: completed carries finalText, failed its code and message."""
    assert (
        _envelope(TurnFinished(outcome=Completed("done")))
        == (
            _head() + '"update":{"type":"turn_finished","outcome":{"status":"completed",'
            '"finalText":"done"}}}'
        ).encode()
    )
    failed = Failed(FailureCode.MODEL_ERROR, "boom")
    assert (
        _envelope(TurnFinished(outcome=failed))
        == (
            _head() + '"update":{"type":"turn_finished","outcome":{"status":"failed",'
            '"code":"model_error","message":"boom"}}}'
        ).encode()
    )
    assert (
        _envelope(TurnFinished(outcome=Cancelled()))
        == (
            _head() + '"update":{"type":"turn_finished","outcome":{"status":"cancelled"}}}'
        ).encode()
    )


def test_snapshots_keep_their_camel_case_bytes() -> None:
    """§8: idle, running (draft, tool calls, pending card, plan) and terminal runtimes."""

    def snapshot(runtime: IdleRuntime | RunningRuntime | TerminalRuntime) -> bytes:
        return wire_json(
            SessionSnapshot(
                session_id="ses_1",
                last_update_sequence=3,
                permission_mode=SandboxMode.ACCEPT_EDITS,
                sandbox=SandboxView(state="unavailable", reason="no bwrap"),
                runtime=runtime,
            )
        )

    head = (
        '{"version":7,"sessionId":"ses_1","lastUpdateSequence":3,"permissionMode":'
        '"accept_edits","sandbox":{"state":"unavailable","reason":"no bwrap"},"runtime":'
    )
    assert snapshot(IdleRuntime()) == (head + '{"state":"idle"}}').encode()
    running = RunningRuntime(
        turn_id="turn_1",
        client_request_id="req_1",
        phase=SessionPhase.RUNNING_TOOLS,
        draft_text="d",
        draft_reasoning="r",
        tool_calls=[
            LiveToolCall(
                tool_call_id="tc_1",
                provider_call_id="call_9",
                name="bash",
                input={},
                status="succeeded",
                output="o",
                is_error=False,
            )
        ],
        pending_permission=Card(
            session_id="ses_1",
            turn_id="turn_1",
            tool_call_id="tc_1",
            provider_call_id="call_9",
            tool_name="bash",
            card=ApprovalCard(mode=SandboxMode.AUTO),
        ),
        plan=PlanView(explanation="e", steps=[], updated_at="t"),
    )
    assert (
        snapshot(running)
        == (
            head + '{"state":"running","turnId":"turn_1","clientRequestId":"req_1","phase":'
            '"running_tools","draftText":"d","draftReasoning":"r","toolCalls":[{"toolCallId":'
            '"tc_1","providerCallId":"call_9","name":"bash","input":{},"status":"succeeded",'
            '"output":"o","isError":false,"artifacts":null}],"pendingPermission":{"sessionId":'
            '"ses_1","turnId":"turn_1","toolCallId":"tc_1","providerCallId":"call_9","toolName":'
            '"bash","card":{"mode":"auto","paths":[]}},"plan":{"explanation":"e","steps":[],'
            '"updatedAt":"t"}}}'
        ).encode()
    )
    terminal = TerminalRuntime(
        turn_id="turn_1",
        client_request_id="req_1",
        outcome=Failed(FailureCode.DOOM_LOOP, "again"),
    )
    assert (
        snapshot(terminal)
        == (
            head + '{"state":"terminal","turnId":"turn_1","clientRequestId":"req_1","outcome":'
            '{"status":"failed","code":"doom_loop","message":"again"},"plan":null}}'
        ).encode()
    )


def test_turn_finished_carries_the_turns_usage_in_camel_case() -> None:
    """Issue 14 point 5: ``turn_finished`` sums the turn's provider-reported tokens."""
    usage = UsageBody(
        input_tokens=120,
        cached_input_tokens=100,
        cache_write_tokens=20,
        output_tokens=9,
        reasoning_tokens=3,
    )
    assert (
        _envelope(TurnFinished(outcome=Completed("done"), usage=usage))
        == (
            _head() + '"update":{"type":"turn_finished","outcome":{"status":"completed",'
            '"finalText":"done"},"usage":{"inputTokens":120,"cachedInputTokens":100,'
            '"cacheWriteTokens":20,"outputTokens":9,"reasoningTokens":3}}}'
        ).encode()
    )
