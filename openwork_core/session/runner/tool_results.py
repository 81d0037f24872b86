"""Writing a tool call's result (session-runtime.md §5 step 9): DB → Chat State →
``tool_call_finished``, and closing its span. A failed write fails the Turn.

The results of a deferred response (all its calls effect-free, ``assistant_commit``) are held
and written with the response in one statement once its last call finished, or before anything
that needs the response durable (a permission card); then Chat State and ``tool_call_finished``
follow for each, in order."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue

from openwork_chat_state.messages import (
    Message,
    Role,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
)
from openwork_core.ids import SpanId, ToolCallId, new_message_id
from openwork_core.session.runner.assistant_commit import AssistantCommitter, CompletedResponse
from openwork_core.session.runner.context import TurnContext
from openwork_core.session.runner.guards import in_chat_state, persisted
from openwork_core.session.runner.tool_step import TERMINATED_TEXT, text_result
from openwork_core.session.storage import OutgoingMessage, committed
from openwork_core.session.trace import SpanFinish
from openwork_core.session.updates import (
    LiveToolCall,
    ToolCallFinished,
    ToolCallStarted,
    file_changes,
)
from openwork_tools import ToolResult, ToolStatus
from openwork_tools.faults import faultpoint

_SPAN_STATUS = {
    ToolStatus.SUCCEEDED: "succeeded",
    ToolStatus.FAILED: "failed",
    ToolStatus.DENIED: "denied",
    ToolStatus.CANCELLED: "cancelled",
    ToolStatus.OUTCOME_UNKNOWN: "outcome_unknown",
}


def _block_text(block: ToolResultBlock) -> str:
    return "".join(b.text for b in block.output if isinstance(b, TextBlock))


def control_attrs() -> dict[str, JsonValue]:
    return {"permissionDecision": "allow", "permissionDecisionSource": "control_tool"}


@dataclass(frozen=True, slots=True)
class _HeldResult:
    """A deferred response's tool result, written with it (its artifacts are the row's)."""

    row: OutgoingMessage
    call: ToolCallBlock
    tool_call_id: ToolCallId
    block: ToolResultBlock
    status: str


class ToolResultWriter:
    """Records results for one Turn; ``ToolCallRunner`` runs the calls."""

    def __init__(self, turn: TurnContext, assistant: AssistantCommitter) -> None:
        self._turn = turn
        self._assistant = assistant
        self._deferred: CompletedResponse | None = None
        """The response whose calls run now, not yet written (all its calls effect-free)."""
        self._held: list[_HeldResult] = []
        self._submission_ahead: int | None = None
        """The next model call's submission, to count in the next result write (the step's
        last): storage.md §3 wants it committed before that submission, and this write is."""
        self.counted_ahead: int | None = None
        """The model call whose submission a committed result write already counted."""

    def defer(self, response: CompletedResponse) -> None:
        """``response``'s calls are all effect-free: write it with their results."""
        self._deferred = response

    async def write_deferred(self, submission: int | None) -> None:
        """The deferred response with the results held so far and the ``submission`` counter,
        in one statement; then each result into Chat State and its ``tool_call_finished``."""
        response, held = self._deferred, self._held
        if response is None:
            return
        self._deferred, self._held = None, []
        if held:
            faultpoint("tool_result_before_commit")
        origins = await self._assistant.with_results(response, [h.row for h in held], submission)
        if submission is not None:
            self.counted_ahead = submission
        if held:
            faultpoint("tool_result_committed")
        chat = self._turn.services.chat
        for h, origin in zip(held, origins[1:], strict=True):
            await in_chat_state(chat.append(committed(h.row, origin)))
            self._finished_update(h.call, h.tool_call_id, h.block, h.status, h.row.artifacts)

    def drop_deferred(self) -> None:
        """The deferred response will not be written (the step ended by an error before its
        write): it is lost like a response whose stream broke."""
        response, self._deferred, self._held = self._deferred, None, []
        if response is not None:
            self._assistant.unwritten(response, "response_unwritten")

    def _started(self, call: ToolCallBlock, tool_call_id: ToolCallId) -> None:
        self._turn.emit(ToolCallStarted(tool_call=LiveToolCall.validating(tool_call_id, call)))

    async def _terminated(
        self,
        call: ToolCallBlock,
        tool_call_id: ToolCallId,
        *,
        span: SpanId | None = None,
        start: bool = False,
    ) -> None:
        if start:
            self._started(call, tool_call_id)
        block = text_result(call, TERMINATED_TEXT, ToolResultState.INTERRUPTED)
        if span is None:
            await self._record(call, tool_call_id, block, "cancelled", ())
        else:
            await self._finish(
                call,
                tool_call_id,
                span,
                block,
                "cancelled",
                attributes={
                    "permissionDecision": "cancelled",
                    "permissionDecisionSource": "system",
                },
            )

    async def _finish_result(
        self,
        call: ToolCallBlock,
        tool_call_id: ToolCallId,
        span: SpanId,
        result: ToolResult,
        decision_source: str,
        wait_ms: int | None,
    ) -> None:
        block = result.to_block(call.id, call.name)
        artifacts: tuple[JsonValue, ...] = tuple(a.to_json() for a in result.artifacts)
        await self._record(call, tool_call_id, block, result.status.value, artifacts)
        self._turn.services.trace.close_span(
            span,
            SpanFinish(
                _SPAN_STATUS[result.status],
                error_code=None if result.error is None else result.error.code.value,
                error_message=None if result.error is None else result.error.message[:1000],
                resolved_tool_name=call.name,
                attributes={
                    "sandboxMode": self._turn.mode.current.value,
                    "permissionDecision": "allow",
                    "permissionDecisionSource": decision_source,
                    "sandboxDenied": result.sandbox_denied,
                    **({"permissionWaitMs": wait_ms} if wait_ms is not None else {}),
                },
            ),
        )

    async def _finish(
        self,
        call: ToolCallBlock,
        tool_call_id: ToolCallId,
        span: SpanId,
        block: ToolResultBlock,
        status: str,
        *,
        control: bool = False,
        attributes: dict[str, JsonValue] | None = None,
        permission_wait_ms: int | None = None,
    ) -> None:
        await self._record(call, tool_call_id, block, status, ())
        extra = control_attrs() if control else (attributes or {})
        if permission_wait_ms is not None:
            extra = {**extra, "permissionWaitMs": permission_wait_ms}
        self._turn.services.trace.close_span(
            span,
            SpanFinish(
                {"succeeded": "succeeded", "failed": "failed", "denied": "denied"}.get(
                    status, "cancelled"
                ),
                attributes=extra,
            ),
        )

    async def _record(
        self,
        call: ToolCallBlock,
        tool_call_id: ToolCallId,
        block: ToolResultBlock,
        status: str,
        artifacts: tuple[JsonValue, ...],
    ) -> None:
        """DB → Chat State → tool_call_finished (session-runtime.md §5 step 9)."""
        turn = self._turn
        message = Message(role=Role.TOOL, content=(block,))
        row = OutgoingMessage(id=new_message_id(), message=message, artifacts=artifacts)
        if self._deferred is not None:
            self._held.append(_HeldResult(row, call, tool_call_id, block, status))
            return
        faultpoint("tool_result_before_commit")
        submission, self._submission_ahead = self._submission_ahead, None
        (origin,) = await persisted(
            turn.services.storage.append(turn.spec.turn_id, (row,), submission=submission),
            "a tool result",
        )
        if submission is not None:
            self.counted_ahead = submission
        faultpoint("tool_result_committed")
        await in_chat_state(turn.services.chat.append(committed(row, origin)))
        self._finished_update(call, tool_call_id, block, status, artifacts)

    def _finished_update(
        self,
        call: ToolCallBlock,
        tool_call_id: ToolCallId,
        block: ToolResultBlock,
        status: str,
        artifacts: tuple[JsonValue, ...],
    ) -> None:
        self._turn.emit(
            ToolCallFinished(
                tool_call_id=tool_call_id,
                provider_call_id=call.id,
                tool_name=call.name,
                status=ToolStatus(status),
                output=_block_text(block),
                is_error=block.state is not ToolResultState.SUCCESS,
                artifacts=file_changes(artifacts),
            )
        )
