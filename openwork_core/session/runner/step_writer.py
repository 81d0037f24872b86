"""The step writer: every write of a model step goes through this one object — the assistant
message, its tool results, the submission's usage row, the turn's counters (session-runtime.md
§3 "persist, then advance", §5 step 9, §6; storage.md §3). Each write is one
``SessionStorage.append(turn_id, StepWrite)``: one transaction (one fenced statement on
PostgreSQL), then Chat State, then the live update.

State diagram (one turn; ``n`` the model call, ``c`` its response's tool calls, ``next`` the
model call after it, ``None`` at the turn's limit)::

    IDLE ──submitting(n)──────────────────▶ IDLE      writes [counter n] unless the step's last
     │                                                write already counted n
     ├──response, no tool call ───────────▶ IDLE      writes [message, usage]
     ├──response, a call may have effect ─▶ AHEAD     writes [message, usage]: before any tool runs
     └──response, every call effect-free ─▶ DEFERRED  writes nothing; the response stays the draft

    AHEAD ──result 1…c-1─────▶ AHEAD                  writes [result]
    AHEAD ──result c─────────▶ IDLE                   writes [result, counter next]

    DEFERRED ──result 1…c-1──▶ DEFERRED               holds it (a result's span still closes)
    DEFERRED ──card──────────▶ AHEAD                  writes [message, usage, results held]
    DEFERRED ──result c──────▶ IDLE                   writes [message, usage, results, counter next]
    DEFERRED ──step_ended────▶ IDLE                   (an error before its write) drops the
                                                      response: its span ends failed

``response`` with calls all effect-free is the steady path: one write per model call. A
``counter next`` written ahead (``counted``) and that call never submitted (cancel, failure) is
why the turn's closing writes the exact counts this object kept (``model_calls``,
``submissions``): the crash window in between is the spec's own (counter committed, then the crash
before the request left). docs/architecture.md "One transaction per steady call"."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pydantic import JsonValue

from openwork_chat_state.item import RealOrigin
from openwork_chat_state.messages import (
    Message,
    Role,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
)
from openwork_core.ids import SpanId, ToolCallId, new_message_id
from openwork_core.plan.model import TurnPlan
from openwork_core.session.outcome import TurnFailure
from openwork_core.session.prompt_cache import RequestFingerprint
from openwork_core.session.runner.context import TurnContext
from openwork_core.session.runner.guards import in_chat_state, persisted
from openwork_core.session.runner.usage_step import log_record
from openwork_core.session.storage import OutgoingMessage, StepWrite, committed
from openwork_core.session.updates import (
    DraftCleared,
    PlanUpdated,
    ToolCallFinished,
    file_change_artifacts,
)
from openwork_core.storage.trace_records import SpanClosed, SpanStatus
from openwork_core.storage.usage_records import ModelCallRecord, add_usage
from openwork_core.usage import TokenUsage
from openwork_tools.faults import faultpoint
from openwork_tools.results import ToolStatus


@dataclass(frozen=True, slots=True, kw_only=True)
class CompletedResponse:
    """A completed response not yet written: its row, its submission's usage record, the
    fingerprint the next call compares with, and its model call's span (ended at ``ended_at``)."""

    row: OutgoingMessage
    record: ModelCallRecord
    fingerprint: RequestFingerprint
    span: SpanId
    reported: TokenUsage | None
    ended_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultRow:
    """One call's result as the writer writes it and announces it."""

    call: ToolCallBlock
    tool_call_id: ToolCallId
    block: ToolResultBlock
    status: ToolStatus
    artifacts: tuple[JsonValue, ...] = ()
    plan: TurnPlan | None = None
    """``update_plan``'s plan, replaced with its result (update-plan.md §4)."""

    def outgoing(self) -> OutgoingMessage:
        message = Message(role=Role.TOOL, content=(self.block,))
        return OutgoingMessage(id=new_message_id(), message=message, artifacts=self.artifacts)


class StepState(enum.Enum):
    IDLE = "idle"
    AHEAD = "ahead"
    """The response is written; its results are written one by one."""
    DEFERRED = "deferred"
    """The response and the results so far are held (every call effect-free)."""


class StepWriter:
    """One turn's writes. ``usage`` sums the submissions written; ``model_calls`` and
    ``submissions`` are what the turn really submitted (its closing writes them)."""

    def __init__(self, turn: TurnContext) -> None:
        self._turn = turn
        self.state = StepState.IDLE
        self.usage = TokenUsage()
        self.model_calls = 0
        self.submissions = 0
        self._response: CompletedResponse | None = None
        """The DEFERRED response."""
        self._held: list[tuple[ToolResultRow, OutgoingMessage]] = []
        self._calls = 0
        """The step's tool calls; ``_results`` of them have a result."""
        self._results = 0
        self._next: int | None = None
        """The model call after this step, counted with the step's last write."""
        self._counted: int | None = None
        """The model call whose submission the last write counted."""

    @property
    def deferred(self) -> bool:
        return self.state is StepState.DEFERRED

    # -- submissions -------------------------------------------------------------------------
    async def submitting(self, model_call: int, submission: int) -> None:
        """Before a submission goes out its counter is durable (storage.md §3): already, when the
        step's last write counted it; else in a write of its own."""
        if submission > 1 or self._counted != model_call:
            await self._append(StepWrite(submission=model_call), "the turn's progress")
        self._counted = None
        self.model_calls = max(self.model_calls, model_call)
        self.submissions += 1

    # -- responses ---------------------------------------------------------------------------
    async def response(
        self, response: CompletedResponse, *, effect_free: bool, next_model_call: int | None
    ) -> None:
        """A completed response (IDLE → IDLE / AHEAD / DEFERRED)."""
        assert self.state is StepState.IDLE, self.state
        self._calls = len(response.row.message.tool_calls)
        self._results = 0
        self._next = next_model_call
        if self._calls and effect_free:
            self._response, self.state = response, StepState.DEFERRED
            return
        await self._write_response(response, (), None)
        self.state = StepState.AHEAD if self._calls else StepState.IDLE

    async def before_card(self) -> None:
        """The user is only ever asked about a durable call (DEFERRED → AHEAD)."""
        if self.state is StepState.DEFERRED:
            await self._flush(None)
            self.state = StepState.AHEAD

    async def result(self, result: ToolResultRow) -> None:
        """A call's result: written (AHEAD) or held (DEFERRED); the step's last carries the next
        model call's counter. Then Chat State and ``tool_call_finished``."""
        assert self.state is not StepState.IDLE, "a result outside a step"
        self._results += 1
        last = self._results == self._calls
        row = result.outgoing()
        if self.state is StepState.DEFERRED:
            self._held.append((result, row))
            if last:
                await self._flush(self._next)
                self.state = StepState.IDLE
            return
        faultpoint("tool_result_before_commit")
        submission = self._next if last else None
        (origin,) = await self._append(
            StepWrite(messages=(row,), plan=result.plan, submission=submission), "a tool result"
        )
        self._counted = submission
        faultpoint("tool_result_committed")
        await self._announce(result, row, origin)
        if last:
            self.state = StepState.IDLE

    def step_ended(self) -> None:
        """The step is over however it ended: a response still DEFERRED (an error before its
        write) is lost like a response whose stream broke."""
        response, self._response, self._held = self._response, None, []
        self.state = StepState.IDLE
        if response is not None:
            self.unwritten(response, "response_unwritten")

    def unwritten(self, response: CompletedResponse, code: str) -> None:
        """``response`` will never be written: its span ends failed, naming no message."""
        self._turn.services.trace.close_span(
            SpanClosed(
                span_id=response.span,
                status=SpanStatus.FAILED,
                error_code=code,
                ended_at=response.ended_at,
            )
        )

    # -- writes ------------------------------------------------------------------------------
    async def _flush(self, submission: int | None) -> None:
        """The DEFERRED response with the results held so far, in one write."""
        response, held = self._response, self._held
        assert response is not None
        self._response, self._held = None, []
        if held:
            faultpoint("tool_result_before_commit")
        origins = await self._write_response(response, [row for _, row in held], submission)
        self._counted = submission
        if held:
            faultpoint("tool_result_committed")
        for (result, row), origin in zip(held, origins[1:], strict=True):
            await self._announce(result, row, origin)

    async def _write_response(
        self,
        response: CompletedResponse,
        results: Sequence[OutgoingMessage],
        submission: int | None,
    ) -> tuple[RealOrigin, ...]:
        """The response (with ``results``), then the call ledger, its span, Chat State and
        ``draft_cleared``."""
        step = StepWrite(
            messages=(response.row, *results), response=response.record, submission=submission
        )
        try:
            origins = await self._append(
                step, "a tool result" if results else "the turn's progress"
            )
        except TurnFailure:
            self.unwritten(response, "persistence_error")
            raise
        services = self._turn.services
        record = response.record
        services.call_ledger.previous = response.fingerprint
        self.usage = add_usage(self.usage, record.usage)
        log_record(record)
        faultpoint("assistant_committed")
        reported = response.reported
        services.trace.close_span(
            SpanClosed(
                span_id=response.span,
                status=SpanStatus.SUCCEEDED,
                input_tokens=reported.input_tokens if reported else None,
                output_tokens=reported.output_tokens if reported else None,
                response_message_id=origins[0].message_id,
                ended_at=response.ended_at,
            )
        )
        await in_chat_state(services.chat.commit_draft(committed(response.row, origins[0])))
        self._turn.emit(DraftCleared())
        return origins

    async def _append(self, step: StepWrite, what: str) -> tuple[RealOrigin, ...]:
        turn = self._turn
        return await persisted(turn.services.storage.append(turn.spec.turn_id, step), what)

    async def _announce(
        self, result: ToolResultRow, row: OutgoingMessage, origin: RealOrigin
    ) -> None:
        turn = self._turn
        await in_chat_state(turn.services.chat.append(committed(row, origin)))
        if result.plan is not None:
            turn.emit(PlanUpdated.of(result.plan))
        block = result.block
        turn.emit(
            ToolCallFinished(
                tool_call_id=result.tool_call_id,
                provider_call_id=result.call.id,
                tool_name=result.call.name,
                status=result.status,
                output="".join(b.text for b in block.output if isinstance(b, TextBlock)),
                is_error=block.state is not ToolResultState.SUCCESS,
                artifacts=file_change_artifacts(row.artifacts),
            )
        )
