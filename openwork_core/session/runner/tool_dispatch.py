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

from openwork_chat_state.messages import (
    Message,
    Role,
    ToolCallBlock,
    ToolResultState,
)
from openwork_core.agents import AgentToolName
from openwork_core.ids import SpanId, ToolCallId, new_message_id, new_tool_call_id
from openwork_core.plan import PlanError, TurnPlan, read_update_plan
from openwork_core.plan.tool import PLAN_UPDATED_TEXT
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
from openwork_core.session.runner.assistant_commit import AssistantCommitter
from openwork_core.session.runner.context import TurnContext
from openwork_core.session.runner.guards import in_chat_state, persisted
from openwork_core.session.runner.tool_progress import forwarded_progress
from openwork_core.session.runner.tool_results import ToolResultWriter, control_attrs
from openwork_core.session.runner.tool_step import (
    DoomLoopCounter,
    doom_loop_text,
    invalid_input_text,
    normalized_arguments,
    step_effect_free,
    text_result,
)
from openwork_core.session.storage import (
    OutgoingMessage,
    StorageError,
    TranscriptPage,
    committed,
    decode_message,
)
from openwork_core.session.toolset import (
    Agent,
    ConversationHistory,
    NotFound,
    Registered,
    UpdatePlan,
    parse_conversation_history,
)
from openwork_core.session.trace import SpanFinish
from openwork_core.session.updates import (
    PermissionRequested,
    PermissionResolved,
    PhaseChanged,
    PlanUpdated,
    SessionPhase,
)
from openwork_tools import (
    SandboxPolicy,
    ToolCallContext,
    ToolErrorCode,
    ToolResult,
    ToolStatus,
)
from openwork_tools.faults import faultpoint

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
    source: str = "sandbox"
    wait_ms: int | None = None


class ToolCallRunner(ToolResultWriter):
    """One turn's tool execution state: doom-loop streak, current plan, last sandbox denial."""

    def __init__(self, turn: TurnContext, assistant: AssistantCommitter) -> None:
        super().__init__(turn, assistant)
        self._doom = DoomLoopCounter(turn.services.agent.doom_loop_threshold)
        self._agents = AgentToolRunner(turn)
        self.current_plan: TurnPlan | None = None
        self._previous_denial: str | None = None

    async def run_calls(
        self, calls: tuple[ToolCallBlock, ...], next_submission: int | None = None
    ) -> TurnOutcome | None:
        """Serially, in provider order. After a terminating call, the rest get the fixed
        ``cancelled`` result (§4). ``next_submission``: the model call that follows, whose
        submission the last result's write counts (one write instead of two; the runner's
        closing corrects the count when that call never goes out)."""
        terminal: TurnOutcome | None = None
        self.counted_ahead = None
        try:
            for index, call in enumerate(calls):
                if index == len(calls) - 1:
                    self._submission_ahead = next_submission
                if terminal is not None:
                    await self._terminated(call, new_tool_call_id(), start=True)
                    continue
                terminal = await self._run(call)
            submission, self._submission_ahead = self._submission_ahead, None
            await self.write_deferred(submission)
        finally:
            self._submission_ahead = None
            self.drop_deferred()
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
        self._started(call, tool_call_id)
        span = turn.services.trace.open_span(
            kind="tool_call",
            name=call.name,
            trace_id=turn.spec.turn_id,
            session_id=turn.spec.session_id,
            turn_id=turn.spec.turn_id,
            provider_call_id=call.id,
            requested_tool_name=call.name,
        )
        if turn.cancellation.requested:
            await self._terminated(call, tool_call_id, span=span)
            return Cancelled()
        normalized = normalized_arguments(call.input)
        if normalized is None:
            self._doom.reset()
            text = invalid_input_text("the arguments are not a JSON object")
            await self._finish(
                call, tool_call_id, span, text_result(call, text, ToolResultState.ERROR), "failed"
            )
            return None
        resolved = turn.services.toolset.resolve(call.name)
        if isinstance(resolved, NotFound):
            self._doom.reset()
            block = text_result(call, resolved.text, ToolResultState.ERROR)
            await self._finish(call, tool_call_id, span, block, "failed")
            return None
        if isinstance(resolved, Agent) and resolved.tool is AgentToolName.WAIT_AGENT:
            self._doom.reset()  # excluded from the identical-call count (multi-agent.md §5)
        elif self._doom.observe(call.name, normalized):
            block = text_result(call, doom_loop_text(call.name), ToolResultState.ERROR)
            await self._finish(call, tool_call_id, span, block, "failed")
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
                await self._finish(call, tool_call_id, span, block, result.status, control=True)
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
        try:
            decided = await self._gate_and_run(call, name, tool_call_id)
        except (TurnFailure, TurnCancelled):
            raise  # a failed write, a cancelled wait: the turn's, not the tool's
        except Exception as exc:
            log.exception("tool.crashed", tool=name)
            failed = f"{name} failed: {type(exc).__name__}: {str(exc)[:2000]}"
            decided = _Decided(ToolResult.fail(ToolErrorCode.EXECUTION_FAILED, failed))
        if decided is None:
            await self._terminated(call, tool_call_id, span=span)
            return Cancelled()
        wait_ms = decided.wait_ms
        verdict = decided.ending
        if isinstance(verdict, RuleDenial):
            block = text_result(call, verdict.text, ToolResultState.DENIED)
            await self._finish(
                call,
                tool_call_id,
                span,
                block,
                "denied",
                attributes={
                    "permissionDecision": "deny",
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
        await self._finish_result(call, tool_call_id, span, result, decided.source, wait_ms)
        if result.status is ToolStatus.CANCELLED or self._turn.cancellation.requested:
            return Cancelled()
        return None

    async def _gate_and_run(
        self, call: ToolCallBlock, name: str, tool_call_id: ToolCallId
    ) -> _Decided | None:
        """Authorize (asking the user when the rules say so), then run the tool; None when the
        turn was cancelled at the card."""
        turn = self._turn
        registry = turn.services.toolset.registry_tools
        verdict = authorize(
            registry.prepare(name, call.input),
            mode=turn.mode.current,
            interactive=turn.interactive,
            sandbox_available=registry.session.sandbox.available,
            previous_denial=self._previous_denial,
            classify=session_path_classifier(registry.session),
            novelty=session_grant_novelty(registry.session, turn.mode.current),
        )
        wait_ms: int | None = None
        decision_source = "sandbox"
        if isinstance(verdict, NeedsCard):
            await self.write_deferred(None)  # the user sees a card only of a durable call
            started = time.monotonic()
            decision = await self._ask(call, tool_call_id, verdict)
            wait_ms = int((time.monotonic() - started) * 1000)
            if decision is None:
                return None
            verdict = decide(verdict, decision)
            decision_source = "user"
        if isinstance(verdict, RuleDenial):
            return _Decided(verdict, decision_source, wait_ms)
        assert isinstance(verdict, Run)
        async with forwarded_progress(tool_call_id, turn.emit) as progress:
            context = ToolCallContext(
                call_id=tool_call_id,
                policy=SandboxPolicy(
                    mode=turn.mode.current, grants=verdict.grants, network=verdict.network
                ),
                cancel=turn.cancellation.token,
                progress=progress,
            )
            if self._deferred is not None:
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
        turn.emit(PermissionResolved(tool_call_id=tool_call_id, decision=decision.value))
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
            await self._finish(call, tool_call_id, span, block, "failed", control=True)
            return None
        block = text_result(call, PLAN_UPDATED_TEXT, ToolResultState.SUCCESS)
        row = OutgoingMessage(
            id=new_message_id(), message=Message(role=Role.TOOL, content=(block,))
        )
        origin = await persisted(
            turn.services.storage.commit_plan_update(turn.spec.turn_id, plan, row),
            "a tool result",
        )
        await in_chat_state(turn.services.chat.append(committed(row, origin)))
        self.current_plan = plan
        turn.emit(PlanUpdated.of(plan))
        self._finished_update(call, tool_call_id, block, "succeeded", ())
        turn.services.trace.close_span(span, SpanFinish("succeeded", attributes=control_attrs()))
        return None

    async def _conversation_history(
        self, call: ToolCallBlock, tool_call_id: ToolCallId, span: SpanId
    ) -> TurnOutcome | None:
        turn = self._turn
        args = parse_conversation_history(call.input)
        if isinstance(args, str):
            block = text_result(call, args, ToolResultState.ERROR)
            await self._finish(call, tool_call_id, span, block, "failed", control=True)
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
            await self._finish(call, tool_call_id, span, block, "failed", control=True)
            return None
        block = text_result(call, transcript_text(page), ToolResultState.SUCCESS)
        await self._finish(call, tool_call_id, span, block, "succeeded", control=True)
        return None
