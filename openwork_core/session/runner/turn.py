"""TurnRunner: the single implementation of the agent loop (session-runtime.md §4).

Persist, then advance: the turn row and user messages are committed before any model call, the
assistant message before any tool that may have an effect runs (a response whose calls are all
effect-free is written with its results, after they ran), each tool result before the next model
call. Every write of a model step goes through the turn's ``StepWriter`` (``step_writer``: its
state diagram)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import assert_never

import structlog

from openwork_chat_state.errors import ChatStateError
from openwork_chat_state.item import ConversationItem, MessageKind
from openwork_chat_state.messages import Message
from openwork_core.agents.messages import agent_message_content
from openwork_core.context.builder import ResolvedSystemContext
from openwork_core.context.engine import PreparedModelCall
from openwork_core.context.errors import ContextAssemblyError
from openwork_core.context.limits import ModelContextLimits
from openwork_core.ids import new_message_id
from openwork_core.models.call_options import call_options
from openwork_core.models.errors import turn_failure_code
from openwork_core.models.port import ModelError
from openwork_core.models.warnings import (
    context_window_too_small,
    threshold_compaction_failed,
    window_too_small,
)
from openwork_core.plan.model import unfinished_step_count
from openwork_core.session.compaction.errors import CompactionError
from openwork_core.session.compaction.policy import (
    ThresholdDecision,
    compaction_floor,
    overflow_can_compact,
    overflow_due,
    threshold_decision,
    threshold_due,
)
from openwork_core.session.outcome import (
    Cancelled,
    Completed,
    Failed,
    FailureCode,
    TurnCancelled,
    TurnFailure,
    TurnOutcome,
)
from openwork_core.session.runner.compaction_step import CompactionStep
from openwork_core.session.runner.context import (
    ResolvedModel,
    SessionServices,
    TurnContext,
    TurnSpec,
)
from openwork_core.session.runner.guards import in_chat_state, persisted
from openwork_core.session.runner.model_step import (
    ModelProtocolViolation,
    assistant_message,
    stream_response,
)
from openwork_core.session.runner.prepare import prepare_call, system_context
from openwork_core.session.runner.steering import SteerDelivery
from openwork_core.session.runner.step_writer import CompletedResponse, StepWriter
from openwork_core.session.runner.tool_dispatch import ToolCallRunner
from openwork_core.session.runner.usage_step import SubmissionFacts, model_call_record
from openwork_core.session.runner.world_state_step import WorldStateStep
from openwork_core.session.storage import (
    OutgoingMessage,
    TurnClosing,
    TurnStatus,
    committed,
)
from openwork_core.session.turn_warnings import TurnWarnings
from openwork_core.session.updates import (
    ContextUpdated,
    DraftCleared,
    PhaseChanged,
    SessionPhase,
)
from openwork_core.storage.compaction_records import CompactionKind
from openwork_core.storage.errors import database_unavailable
from openwork_core.storage.trace_records import SpanClosed, SpanKind, SpanStatus
from openwork_core.usage import TokenUsage

__all__ = [
    "ResolvedModel",
    "SessionServices",
    "TurnContext",
    "TurnRunner",
    "TurnSpec",
]

log = structlog.get_logger(__name__)


class _Overflow(Exception):
    """The provider reported context_overflow before any semantic output (compaction.md §1)."""

    def __init__(self, error: ModelError) -> None:
        super().__init__(error.message)
        self.error = error


class TurnRunner:
    def __init__(self, turn: TurnContext) -> None:
        self._turn = turn
        self._spec = turn.spec
        self._services = turn.services
        self._emit = turn.emit
        self._cancellation = turn.cancellation
        self._limits = ModelContextLimits.from_capabilities(turn.spec.model.capabilities)
        self._writer = StepWriter(turn)
        self._tools = ToolCallRunner(turn, self._writer)
        self.unwritten_closing: TurnClosing | None = None
        """The terminal state a database outage kept from being written (faults issue)."""
        self._compaction = CompactionStep(turn)
        self._warnings = TurnWarnings(turn.spec.turn_id, turn.services.storage, turn.emit)
        self._steering = SteerDelivery(
            turn.steering, turn.services.storage, turn.services.chat, turn.spec.turn_id
        )

    async def run(self) -> TurnOutcome:
        spec = self._spec
        with structlog.contextvars.bound_contextvars(
            session_id=spec.session_id, turn_id=spec.turn_id
        ):
            try:
                outcome = await self._loop()
            except TurnFailure as failure:
                outcome = failure.outcome
            except TurnCancelled:
                outcome = Cancelled()
            except Exception as exc:  # a bug must still end the turn row, never leave it running
                log.exception("turn.runner_failed")
                outcome = Failed(FailureCode.ACTOR_STOPPED, f"internal error: {exc!r}")
            finally:
                await self._discard_draft()
            await self._steering.close()  # cancel discards nothing committed (issue 26)
            await self._finish(outcome)
            log.info("turn.finished", outcome=outcome.status)
            return outcome

    @property
    def usage(self) -> TokenUsage:
        """The provider-reported usage of this turn's written submissions (``turn_finished``)."""
        return self._writer.usage

    # -- the loop ----------------------------------------------------------------------------
    async def _loop(self) -> TurnOutcome:
        await self._append(list(self._turn.opened))  # committed before the turn was accepted
        services = self._services
        system = system_context(services)
        disabled = self._spec.disabled_skill_names
        mode = self._turn.mode
        world_state = WorldStateStep(
            storage=services.storage,
            chat=services.chat,
            tracker=services.world_state,
            sources=lambda: services.world_state_sources(disabled, mode.current),
        )
        for model_call in range(1, services.agent.max_model_calls + 1):
            self._cancellation.check()
            await self._drain_mailbox()
            await self._steering.deliver()  # after every tool result of the last step
            self._take_model_switch()
            self._emit(PhaseChanged(phase=SessionPhase.RUNNING_MODEL))
            await world_state.sample(self._spec.turn_id, model_call, 1)
            message = await self._model_call(system, world_state, model_call)
            calls = message.tool_calls
            if not calls:
                if model_call < services.agent.max_model_calls and await self._steering.last_look():
                    continue  # a steer came during the final answer: one more call carries it
                return Completed(message.text)
            self._emit(PhaseChanged(phase=SessionPhase.RUNNING_TOOLS))
            terminal = await self._tools.run_calls(calls)
            if terminal is not None:
                return terminal
        limit = services.agent.max_model_calls
        return Failed(
            FailureCode.MAX_MODEL_CALLS,
            f"the turn reached its limit of {limit} model calls without a final answer",
        )

    def _take_model_switch(self) -> None:
        """Issue 26 point 4: a model the session switched to while this turn runs is used from
        this model call on, with its limits (window, reservation, compaction line)."""
        switched = self._turn.next_model.take()
        if switched is None:
            return
        self._spec = dataclasses.replace(self._spec, model=switched)
        self._limits = ModelContextLimits.from_capabilities(switched.capabilities)
        log.info("turn.model_switched", model=switched.model.name)

    async def _drain_mailbox(self) -> None:
        """Step 3b (multi-agent.md §6): every queued agent message is written (``ON CONFLICT (id)
        DO NOTHING``, one transaction), then only the rows written now join Chat State. Runs after
        all tool results of the previous step, so it never splits calls from their results."""
        services = self._services
        drained = services.mailbox.drain()
        if not drained:
            return
        rows = [
            OutgoingMessage(
                id=m.id, message=agent_message_content(m), kind=MessageKind.AGENT_MESSAGE
            )
            for m in drained
        ]
        origins = await persisted(
            services.storage.append_agent_messages(self._spec.turn_id, rows),
            "the turn's progress",
        )
        written = [committed(r, o) for r, o in zip(rows, origins, strict=True) if o is not None]
        log.info("agent_messages.drained", queued=len(drained), written=len(written))
        await self._append(written)

    async def _prepare(self, system: ResolvedSystemContext) -> PreparedModelCall:
        try:
            prepared = await prepare_call(self._services, self._spec.model, system)
        except ContextAssemblyError as exc:
            raise TurnFailure(FailureCode.MODEL_PROTOCOL_ERROR, str(exc)) from exc
        budget = prepared.budget
        self._emit(
            ContextUpdated(
                system_context_tokens=budget.system_context_tokens,
                conversation_tokens=budget.conversation_tokens,
                tool_surface_tokens=budget.tool_surface_tokens,
                estimated_input_tokens=budget.estimated_input_tokens,
                reserved_output_tokens=budget.reserved_output_tokens,
                auto_compact_percent=self._limits.auto_compact_percent(budget),
            )
        )
        return prepared

    async def _model_call(
        self, system: ResolvedSystemContext, world_state: WorldStateStep, model_call: int
    ) -> Message:
        """One logical model call: threshold compaction before the first submission, one
        resubmission after an explicit overflow, at most one summary either way (compaction.md §1),
        and a summary only when it can help (issue 24 point 1: ``threshold_decision``)."""
        prepared = await self._prepare(system)
        summarized = False
        if threshold_due(prepared.budget, self._limits):
            if await self._compaction.prune():
                prepared = await self._prepare(system)
            if self._decision(prepared) is ThresholdDecision.COMPACT:
                try:
                    await self._compaction.summarize(
                        CompactionKind.THRESHOLD, system, self._tools.current_plan, self._spec.model
                    )
                except TurnFailure as failure:
                    if not isinstance(failure.__cause__, CompactionError):
                        raise  # refused before any summary (two ineffective ones): says why
                    message = threshold_compaction_failed(
                        prepared.budget, self._limits.context_window, failure.outcome.message
                    )
                    raise TurnFailure(failure.outcome.code, message) from failure
                summarized = True
                await world_state.sample(self._spec.turn_id, model_call, 2)
                prepared = await self._prepare(system)
            if self._decision(prepared) is ThresholdDecision.TOO_SMALL:
                warning = window_too_small(prepared.budget, self._limits.context_window)
                await self._warnings.raise_once(warning, model_call)
        try:
            return await self._submit(prepared, model_call, 1)
        except _Overflow as overflow:
            if summarized:
                raise TurnFailure(FailureCode.MODEL_ERROR, overflow.error.message) from overflow
            first = overflow.error
        await self._discard_draft()
        pruned = await self._compaction.prune()
        if pruned:  # pruned only when the request got smaller: never resubmit it unchanged
            before = prepared.budget.estimated_input_tokens
            prepared = await self._prepare(system)
            pruned = prepared.budget.estimated_input_tokens < before
        if not pruned or threshold_due(prepared.budget, self._limits):
            if overflow_can_compact(prepared.budget, compaction_floor(prepared)):
                await self._compaction.summarize(
                    CompactionKind.OVERFLOW, system, self._tools.current_plan, self._spec.model
                )
                summarized = True
                await world_state.sample(self._spec.turn_id, model_call, 2)
                prepared = await self._prepare(system)
            elif not pruned:  # nothing changed that could make it fit: fail at once
                raise self._too_small(prepared, first)
        try:
            return await self._submit(prepared, model_call, 2)
        except _Overflow as overflow:
            if summarized:
                raise TurnFailure(FailureCode.MODEL_ERROR, overflow.error.message) from overflow
            raise self._too_small(prepared, overflow.error) from overflow

    def _decision(self, prepared: PreparedModelCall) -> ThresholdDecision:
        return threshold_decision(prepared.budget, self._limits, compaction_floor(prepared))

    def _too_small(self, prepared: PreparedModelCall, error: ModelError) -> TurnFailure:
        message = context_window_too_small(
            prepared.budget, self._limits.context_window, error.message
        )
        return TurnFailure(FailureCode.CONTEXT_WINDOW_TOO_SMALL, message)

    async def _submit(
        self, prepared: PreparedModelCall, model_call: int, submission: int
    ) -> Message:
        spec = self._spec
        services = self._services
        await self._writer.submitting(model_call, submission)
        attempt = f"{spec.turn_id}-model-{model_call}"
        if submission > 1:
            attempt = f"{attempt}-submission-{submission}"
        await self._warnings.before_submission(
            spec.model.served, spec.model.model.name, bool(prepared.request.tools), model_call
        )
        options = call_options(spec.model.provider.settings, attempt, session_id=spec.session_id)
        span = services.trace.open_span(
            kind=SpanKind.MODEL_CALL,
            name=f"model call {model_call}",
            trace_id=spec.turn_id,
            session_id=spec.session_id,
            turn_id=spec.turn_id,
            model_id=f"{spec.model.provider.id}/{spec.model.model.name}",
            resolved_model_name=spec.model.model.name,
        )
        try:
            async with self._cancellation.scope():
                streamed = await stream_response(
                    spec.model.port, prepared.request, options, services.chat, self._emit
                )
        except ModelError as exc:
            log.warning("model.failed", kind=exc.kind.value, error=exc.message)
            services.trace.close_span(
                SpanClosed(
                    span_id=span,
                    status=SpanStatus.FAILED,
                    error_code=exc.kind.value,
                    error_message=exc.message,
                )
            )
            if submission == 1 and overflow_due(exc):
                raise _Overflow(exc) from exc
            raise TurnFailure(turn_failure_code(exc), exc.message) from exc
        except ModelProtocolViolation as exc:
            services.trace.close_span(
                SpanClosed(
                    span_id=span,
                    status=SpanStatus.FAILED,
                    error_code=FailureCode.MODEL_PROTOCOL_ERROR.value,
                    error_message=str(exc),
                )
            )
            raise TurnFailure(FailureCode.MODEL_PROTOCOL_ERROR, str(exc)) from exc
        except TurnCancelled:
            services.trace.close_span(SpanClosed(span_id=span, status=SpanStatus.CANCELLED))
            raise
        record, fingerprint = model_call_record(
            services.call_ledger.previous,
            prepared,
            streamed.response.usage,
            SubmissionFacts(
                model_call=model_call,
                submission=submission,
                provider_id=spec.model.provider.id,
                at=datetime.now(UTC),
            ),
        )
        await self._warnings.after_submission(record)
        message = assistant_message(streamed.response)
        response = CompletedResponse(
            row=OutgoingMessage(id=new_message_id(), message=message),
            record=record,
            fingerprint=fingerprint,
            span=span,
            reported=streamed.response.usage,
            ended_at=datetime.now(UTC),
        )
        more = model_call < services.agent.max_model_calls
        await self._writer.response(
            response,
            effect_free=self._tools.effect_free(message.tool_calls),
            next_model_call=model_call + 1 if more else None,
        )
        return message

    # -- helpers -----------------------------------------------------------------------------
    async def _append(self, items: list[ConversationItem]) -> None:
        await in_chat_state(self._services.chat.append_all(items))

    async def _discard_draft(self) -> None:
        try:
            if await self._services.chat.draft() is not None:
                await self._services.chat.discard_draft()
                self._emit(DraftCleared())
        except ChatStateError:
            log.warning("turn.draft_discard_failed")

    async def _finish(self, outcome: TurnOutcome) -> None:
        """Write the terminal state; a failure here is logged, the outcome stands."""
        match outcome:
            case Completed():
                status, code, message = TurnStatus.COMPLETED, None, None
            case Failed(code=failure, message=text):
                status, code, message = TurnStatus.FAILED, failure.value, text
            case Cancelled():
                status, code, message = TurnStatus.CANCELLED, None, None
            case _:
                assert_never(outcome)
        closing = TurnClosing(
            status=status,
            error_code=code,
            error_message=message,
            plan_unfinished_step_count=unfinished_step_count(self._tools.current_plan),
            model_call_count=self._writer.model_calls,
            model_submission_count=self._writer.submissions,
        )
        try:
            await self._services.storage.finish_turn(self._spec.turn_id, closing)
        except Exception as exc:
            log.error("turn.finish_write_failed", error=str(exc))
            if database_unavailable(exc):
                self.unwritten_closing = closing  # the actor writes it once the database is back
