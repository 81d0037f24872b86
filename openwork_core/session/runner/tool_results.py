"""A tool call's result (session-runtime.md §5 step 9): handed to the turn's ``StepWriter``
(DB → Chat State → ``tool_call_finished``), and its span closed with the permission decision
that let it run or not. A failed write fails the Turn."""

from __future__ import annotations

from pydantic import JsonValue

from openwork_chat_state.messages import ToolCallBlock, ToolResultBlock, ToolResultState
from openwork_core.ids import SpanId, ToolCallId
from openwork_core.plan.model import TurnPlan
from openwork_core.session.runner.context import TurnContext
from openwork_core.session.runner.step_writer import StepWriter, ToolResultRow
from openwork_core.session.runner.tool_step import TERMINATED_TEXT, text_result
from openwork_core.session.updates import LiveToolCall, ToolCallStarted
from openwork_core.storage.trace_records import (
    PermissionDecisionSource,
    SpanClosed,
    SpanPermission,
    SpanStatus,
)
from openwork_tools.modes import SandboxMode
from openwork_tools.results import ToolResult, ToolStatus


def control_attrs() -> dict[str, JsonValue]:
    return {
        "permissionDecision": SpanPermission.ALLOW,
        "permissionDecisionSource": PermissionDecisionSource.CONTROL_TOOL,
    }


class ToolResults:
    """One turn's tool results, written through its step writer."""

    def __init__(self, turn: TurnContext, writer: StepWriter) -> None:
        self._turn = turn
        self._writer = writer

    def started(self, call: ToolCallBlock, tool_call_id: ToolCallId) -> None:
        self._turn.emit(ToolCallStarted(tool_call=LiveToolCall.validating(tool_call_id, call)))

    async def terminated(
        self,
        call: ToolCallBlock,
        tool_call_id: ToolCallId,
        *,
        span: SpanId | None = None,
        start: bool = False,
    ) -> None:
        """The fixed ``cancelled`` result of a call the turn's end kept from running (§4)."""
        if start:
            self.started(call, tool_call_id)
        block = text_result(call, TERMINATED_TEXT, ToolResultState.INTERRUPTED)
        if span is None:
            await self.record(call, tool_call_id, block, ToolStatus.CANCELLED)
            return
        await self.finish(
            call,
            tool_call_id,
            span,
            block,
            ToolStatus.CANCELLED,
            attributes={
                "permissionDecision": SpanPermission.CANCELLED,
                "permissionDecisionSource": PermissionDecisionSource.SYSTEM,
            },
        )

    async def finish_result(
        self,
        call: ToolCallBlock,
        tool_call_id: ToolCallId,
        span: SpanId,
        result: ToolResult,
        decision_source: PermissionDecisionSource,
        wait_ms: int | None,
        mode: SandboxMode,
    ) -> None:
        """A registry tool's result and its span (``mode``: the one the call ran under)."""
        block = result.to_block(call.id, call.name)
        artifacts: tuple[JsonValue, ...] = tuple(a.to_json() for a in result.artifacts)
        await self.record(call, tool_call_id, block, result.status, artifacts)
        self._turn.services.trace.close_span(
            SpanClosed(
                span_id=span,
                status=SpanStatus.of(result.status),
                error_code=None if result.error is None else result.error.code.value,
                error_message=None if result.error is None else result.error.message[:1000],
                resolved_tool_name=call.name,
                attributes={
                    "sandboxMode": mode.value,
                    "permissionDecision": SpanPermission.ALLOW,
                    "permissionDecisionSource": decision_source,
                    "sandboxDenied": result.sandbox_denied,
                    **({"permissionWaitMs": wait_ms} if wait_ms is not None else {}),
                },
            )
        )

    async def finish(
        self,
        call: ToolCallBlock,
        tool_call_id: ToolCallId,
        span: SpanId,
        block: ToolResultBlock,
        status: ToolStatus,
        *,
        control: bool = False,
        attributes: dict[str, JsonValue] | None = None,
        permission_wait_ms: int | None = None,
        plan: TurnPlan | None = None,
    ) -> None:
        """A result the runner made itself (an error, a denial, a control tool's) and its span."""
        await self.record(call, tool_call_id, block, status, plan=plan)
        extra = control_attrs() if control else (attributes or {})
        if permission_wait_ms is not None:
            extra = {**extra, "permissionWaitMs": permission_wait_ms}
        self._turn.services.trace.close_span(
            SpanClosed(span_id=span, status=SpanStatus.of(status), attributes=extra)
        )

    async def record(
        self,
        call: ToolCallBlock,
        tool_call_id: ToolCallId,
        block: ToolResultBlock,
        status: ToolStatus,
        artifacts: tuple[JsonValue, ...] = (),
        *,
        plan: TurnPlan | None = None,
    ) -> None:
        await self._writer.result(
            ToolResultRow(
                call=call,
                tool_call_id=tool_call_id,
                block=block,
                status=status,
                artifacts=artifacts,
                plan=plan,
            )
        )
