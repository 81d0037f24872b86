"""Running the tool calls of one response (session-runtime.md §5): resolve → validate →
doom-loop check → approval gate → execute → persist the result → Chat State → live update.
Tool failures are results the model sees; only a failed write or a terminal decision ends the turn."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import assert_never

import orjson
import structlog

from openwork_chat_state.messages import ToolCallBlock, ToolResultState
from openwork_core.agents.tools import AgentToolName
from openwork_core.ids import SpanId, ToolCallId, new_tool_call_id
from openwork_core.plan.errors import PlanError
from openwork_core.plan.model import TurnPlan
from openwork_core.plan.tool import PLAN_UPDATED_TEXT, read_update_plan
from openwork_core.session.approval import (
    DenialSource,
    NeedsCard,
    PermissionDecision,
    PermissionRequest,
    RuleDenial,
    Run,
    authorize,
    decide,
    session_grant_novelty,
    session_path_classifier,
)
from openwork_core.session.outcome import (
    Cancelled,
    Failed,
    FailureCode,
    TurnCancelled,
    TurnFailure,
    TurnOutcome,
)
from openwork_core.session.runner.agent_tools import AgentToolRunner
from openwork_core.session.runner.context import TurnContext
from openwork_core.session.runner.step_writer import StepWriter
from openwork_core.session.runner.tool_progress import forwarded_progress
from openwork_core.session.runner.tool_results import ToolResults
from openwork_core.session.runner.tool_step import (
    DoomLoopCounter,
    doom_loop_text,
    invalid_input_text,
    normalized_arguments,
    step_effect_free,
    text_result,
)
from openwork_core.session.storage import StorageError, TranscriptPage, decode_message
from openwork_core.session.toolset import (
    Agent,
    ConversationHistory,
    NotFound,
    Registered,
    UpdatePlan,
    parse_conversation_history,
)
from openwork_core.session.updates import (
    PermissionRequested,
    PermissionResolved,
    PhaseChanged,
    SessionPhase,
)
from openwork_core.storage.trace_records import PermissionDecisionSource, SpanKind, SpanPermission
from openwork_tools.context import ToolCallContext
from openwork_tools.faults import faultpoint
from openwork_tools.modes import SandboxMode
from openwork_tools.policy import SandboxPolicy
from openwork_tools.results import ToolErrorCode, ToolResult, ToolStatus

log = structlog.get_logger(__name__)


def transcript_text(page: TranscriptPage) -> str:
    """The tool result of ``conversation_history``: raw messages as stored, without UI artifacts."""
    return orjson.dumps(
        {
            "compactionId": page.compaction_id,
            "throughMessageSequence": page.through_message_sequence,
            "messages": [
                {
                    "sequence": m.sequence,
                    "role": m.role.value,
                    "kind": m.kind.value,
                    "content": decode_message(m).content,
                }
                for m in page.messages
            ],
            "hasMore": page.has_more,
            "nextAfterSequence": page.next_after_sequence,
        }
    ).decode()


@dataclass(frozen=True, slots=True)
class _Decided:
    """What the gate and the tool came to for one call: the rule's denial or the tool's result,
    who decided (``sandbox`` or ``user``) and how long the card waited."""

    ending: RuleDenial | ToolResult
    source: PermissionDecisionSource = PermissionDecisionSource.SANDBOX
    wait_ms: int | None = None


class ToolCallRunner:
    """One turn's tool execution state: doom-loop streak, current plan, last sandbox denial.
    Every result goes through the turn's ``StepWriter``."""

    def __init__(self, turn: TurnContext, writer: StepWriter) -> None:
        self._turn = turn
        self._writer = writer
        self._results = ToolResults(turn, writer)
        self._doom = DoomLoopCounter(turn.services.agent.doom_loop_threshold)
        self._agents = AgentToolRunner(turn)
        self.current_plan: TurnPlan | None = None
        self._previous_denial: str | None = None

    async def run_calls(self, calls: tuple[ToolCallBlock, ...]) -> TurnOutcome | None:
        """Serially, in provider order; each call gets exactly one result. After a terminating
        call, the rest get the fixed ``cancelled`` result (§4)."""
        terminal: TurnOutcome | None = None
        try:
            for call in calls:
                if terminal is not None:
                    await self._results.terminated(call, new_tool_call_id(), start=True)
                    continue
                terminal = await self._run(call)
        finally:
            self._writer.step_ended()
        return terminal

    def effect_free(self, calls: tuple[ToolCallBlock, ...]) -> bool:
        """Whether none of ``calls`` can have a side effect or ask the user (their response is
        then written with their results, after they ran)."""
        toolset = self._turn.services.toolset
        for call in calls:
            resolved = toolset.resolve(call.name)
            risk = (
                toolset.registry_tools.risk(resolved.name)
                if isinstance(resolved, Registered)
                else None
            )
            if not step_effect_free(call.input, resolved, risk):
                return False
        return True

    # -- one call ----------------------------------------------------------------------------
    async def _run(self, call: ToolCallBlock) -> TurnOutcome | None:
        turn = self._turn
        tool_call_id = new_tool_call_id()
        self._results.started(call, tool_call_id)
        span = turn.services.trace.open_span(
            kind=SpanKind.TOOL_CALL,
            name=call.name,
            trace_id=turn.spec.turn_id,
            session_id=turn.spec.session_id,
            turn_id=turn.spec.turn_id,
            provider_call_id=call.id,
            requested_tool_name=call.name,
        )
        if turn.cancellation.requested:
            await self._results.terminated(call, tool_call_id, span=span)
            return Cancelled()
        normalized = normalized_arguments(call.input)
        if normalized is None:
            self._doom.reset()
            text = invalid_input_text("the arguments are not a JSON object")
            await self._results.finish(
                call,
                tool_call_id,
                span,
                text_result(call, text, ToolResultState.ERROR),
                ToolStatus.FAILED,
            )
            return None
        resolved = turn.services.toolset.resolve(call.name)
        if isinstance(resolved, NotFound):
            self._doom.reset()
            block = text_result(call, resolved.text, ToolResultState.ERROR)
            await self._results.finish(call, tool_call_id, span, block, ToolStatus.FAILED)
            return None
        if isinstance(resolved, Agent) and resolved.tool is AgentToolName.WAIT_AGENT:
            self._doom.reset()  # excluded from the identical-call count (multi-agent.md §5)
        elif self._doom.observe(call.name, normalized):
            block = text_result(call, doom_loop_text(call.name), ToolResultState.ERROR)
            await self._results.finish(call, tool_call_id, span, block, ToolStatus.FAILED)
            threshold = turn.services.agent.doom_loop_threshold
            return Failed(
                FailureCode.DOOM_LOOP,
                f"the model called {call.name} with the same arguments {threshold} times in a row",
            )
        match resolved:
            case UpdatePlan():
                return await self._update_plan(call, tool_call_id, span)
            case ConversationHistory():
                return await self._conversation_history(call, tool_call_id, span)
            case Agent(tool=tool):
                result = await self._agents.run(tool, call.input, span)
                block = text_result(call, result.text, result.state)
                await self._results.finish(
                    call, tool_call_id, span, block, result.status, control=True
                )
                return result.terminal
            case Registered(name=name):
                return await self._registered(call, name, tool_call_id, span)
            case _:
                assert_never(resolved)

    async def _registered(
        self, call: ToolCallBlock, name: str, tool_call_id: ToolCallId, span: SpanId
    ) -> TurnOutcome | None:
        """Gate and run one registry tool, then record what came of it. This is the one
        exception boundary of a tool call (issue 22 point 7): whatever the tool's own code
        raises (``prepare``, ``call``, an ``OSError`` from a path that changed under it) is that
        call's error result and the turn goes on; only the turn's own endings pass through."""
        mode = self._turn.mode.current  # a mode change applies from the next call (§1)
        try:
            decided = await self._gate_and_run(call, name, tool_call_id, mode)
        except (TurnFailure, TurnCancelled):
            raise  # a failed write, a cancelled wait: the turn's, not the tool's
        except Exception as exc:
            log.exception("tool.crashed", tool=name)
            failed = f"{name} failed: {type(exc).__name__}: {str(exc)[:2000]}"
            decided = _Decided(ToolResult.fail(ToolErrorCode.EXECUTION_FAILED, failed))
        if decided is None:
            await self._results.terminated(call, tool_call_id, span=span)
            return Cancelled()
        wait_ms = decided.wait_ms
        verdict = decided.ending
        if isinstance(verdict, RuleDenial):
            block = text_result(call, verdict.text, ToolResultState.DENIED)
            await self._results.finish(
                call,
                tool_call_id,
                span,
                block,
                ToolStatus.DENIED,
                attributes={
                    "permissionDecision": SpanPermission.DENY,
                    "permissionDecisionSource": verdict.source.value,
                },
                permission_wait_ms=wait_ms,
            )
            if verdict.source is DenialSource.USER:
                return Failed(FailureCode.PERMISSION_DENIED, "the user denied a tool call")
            return None
        result = verdict
        if result.sandbox_denied:
            self._previous_denial = result.text.strip().splitlines()[-1] if result.text else None
        await self._results.finish_result(
            call, tool_call_id, span, result, decided.source, wait_ms, mode
        )
        if result.status is ToolStatus.CANCELLED or self._turn.cancellation.requested:
            return Cancelled()
        return None

    async def _gate_and_run(
        self, call: ToolCallBlock, name: str, tool_call_id: ToolCallId, mode: SandboxMode
    ) -> _Decided | None:
        """Authorize (asking the user when the rules say so), then run the tool; None when the
        turn was cancelled at the card. The call runs under ``mode``, the mode it was authorized
        and carded under (permissions-sandbox.md §1: a change is effective from the next tool
        call), even when the user changes it while the card waits: what runs is what the card
        showed."""
        turn = self._turn
        registry = turn.services.toolset.registry_tools
        verdict = authorize(
            registry.prepare(name, call.input),
            mode=mode,
            interactive=turn.interactive,
            sandbox_available=registry.session.sandbox.available,
            previous_denial=self._previous_denial,
            classify=session_path_classifier(registry.session),
            novelty=session_grant_novelty(registry.session, mode),
        )
        wait_ms: int | None = None
        decision_source = PermissionDecisionSource.SANDBOX
        if isinstance(verdict, NeedsCard):
            await self._writer.before_card()  # the user sees a card only of a durable call
            started = time.monotonic()
            decision = await self._ask(call, tool_call_id, verdict)
            wait_ms = int((time.monotonic() - started) * 1000)
            if decision is None:
                return None
            verdict = decide(verdict, decision)
            decision_source = PermissionDecisionSource.USER
        if isinstance(verdict, RuleDenial):
            return _Decided(verdict, decision_source, wait_ms)
        assert isinstance(verdict, Run)
        async with forwarded_progress(tool_call_id, turn.emit) as progress:
            context = ToolCallContext(
                call_id=tool_call_id,
                policy=SandboxPolicy(mode=mode, grants=verdict.grants, network=verdict.network),
                cancel=turn.cancellation.token,
                progress=progress,
            )
            if self._writer.deferred:
                faultpoint("read_only_tool_running")  # nothing of this response is written yet
            result = await registry.call(name, call.input, context)
        return _Decided(result, decision_source, wait_ms)

    async def _ask(
        self, call: ToolCallBlock, tool_call_id: ToolCallId, pending: NeedsCard
    ) -> PermissionDecision | None:
        """Show the card and wait for allow_once / deny; None when the turn was cancelled."""
        turn = self._turn
        request = PermissionRequest(
            session_id=turn.spec.session_id,
            turn_id=turn.spec.turn_id,
            tool_call_id=tool_call_id,
            provider_call_id=call.id,
            tool_name=call.name,
            card=pending.card,
        )
        future = turn.permission.open(tool_call_id)
        turn.emit(PhaseChanged(phase=SessionPhase.WAITING_PERMISSION))
        turn.emit(PermissionRequested(request=request))
        try:
            async with turn.cancellation.scope():
                decision = await future
        except TurnCancelled:
            return None
        finally:
            turn.permission.close()
        turn.emit(PermissionResolved(tool_call_id=tool_call_id, decision=decision))
        turn.emit(PhaseChanged(phase=SessionPhase.RUNNING_TOOLS))
        return decision

    async def _update_plan(
        self, call: ToolCallBlock, tool_call_id: ToolCallId, span: SpanId
    ) -> TurnOutcome | None:
        """update-plan.md §4: plan and tool message in one transaction; event after commit."""
        turn = self._turn
        try:
            plan = read_update_plan(turn.spec.turn_id, call.input, datetime.now(UTC))
        except PlanError as error:
            block = text_result(call, str(error), ToolResultState.ERROR)
            await self._results.finish(
                call, tool_call_id, span, block, ToolStatus.FAILED, control=True
            )
            return None
        block = text_result(call, PLAN_UPDATED_TEXT, ToolResultState.SUCCESS)
        await self._results.finish(
            call, tool_call_id, span, block, ToolStatus.SUCCEEDED, control=True, plan=plan
        )
        self.current_plan = plan
        return None

    async def _conversation_history(
        self, call: ToolCallBlock, tool_call_id: ToolCallId, span: SpanId
    ) -> TurnOutcome | None:
        turn = self._turn
        args = parse_conversation_history(call.input)
        if isinstance(args, str):
            block = text_result(call, args, ToolResultState.ERROR)
            await self._results.finish(
                call, tool_call_id, span, block, ToolStatus.FAILED, control=True
            )
            return None
        try:
            page = await turn.services.storage.compactions.read_transcript(
                turn.spec.session_id,
                args.compaction_id,
                args.effective_after_sequence,
                args.effective_limit,
            )
        except StorageError as error:
            block = text_result(call, f"{error.code}: {error}", ToolResultState.ERROR)
            await self._results.finish(
                call, tool_call_id, span, block, ToolStatus.FAILED, control=True
            )
            return None
        block = text_result(call, transcript_text(page), ToolResultState.SUCCESS)
        await self._results.finish(
            call, tool_call_id, span, block, ToolStatus.SUCCEEDED, control=True
        )
        return None
