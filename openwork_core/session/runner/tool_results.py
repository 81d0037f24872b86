"""Writing a tool call's result (session-runtime.md §5 step 9): DB → Chat State →
``tool_call_finished``, and closing its span. A failed write fails the Turn."""

from __future__ import annotations

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
from openwork_core.session.runner.context import TurnContext
from openwork_core.session.runner.guards import in_chat_state, persisted
from openwork_core.session.runner.tool_step import TERMINATED_TEXT, text_result
from openwork_core.session.storage import OutgoingMessage, committed
from openwork_core.session.trace import SpanFinish
from openwork_core.session.updates import LiveToolCall, ToolCallFinished, ToolCallStarted
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


class ToolResultWriter:
    """Records results for one Turn; ``ToolCallRunner`` runs the calls."""

    def __init__(self, turn: TurnContext) -> None:
        self._turn = turn
        self._submission_ahead: int | None = None
        """The next model call's submission, to count in the next result write (the step's
        last): storage.md §3 wants it committed before that submission, and this write is."""
        self.counted_ahead: int | None = None
        """The model call whose submission a committed result write already counted."""

    def _started(self, call: ToolCallBlock, tool_call_id: ToolCallId) -> None:
        self._turn.emit(
            ToolCallStarted(
                tool_call=LiveToolCall(
                    tool_call_id=tool_call_id,
                    provider_call_id=call.id,
                    name=call.name,
                    input=call.input,
                    status="validating",
                )
            )
        )

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
                status=status,
                output=_block_text(block),
                is_error=block.state is not ToolResultState.SUCCESS,
                artifacts=list(artifacts) or None,
            )
        )
