"""Committing a completed response (session-runtime.md §6): the assistant message row → Chat State
→ ``draft_cleared``, with the submission's usage and the model call's span.

Write-ahead (storage.md §3) when the response may have an effect: the message is written before
any of its tools runs. A response whose tool calls are all effect-free is *deferred*: nothing
is written before its tools run; the message is written in one statement with its tool results
(and the next submission's counter) after they finished (docs/architecture.md "One transaction
per steady call"). Until then the response stays the session's draft, so ``draft_cleared`` still
means "the message is durable and in Chat State" (or discarded)."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from openwork_chat_state.item import RealOrigin
from openwork_core.ids import SpanId
from openwork_core.session.outcome import TurnFailure
from openwork_core.session.prompt_cache import RequestFingerprint
from openwork_core.session.runner.context import TurnContext
from openwork_core.session.runner.guards import in_chat_state, persisted
from openwork_core.session.runner.usage_step import log_record
from openwork_core.session.storage import OutgoingMessage, TurnUsage, committed
from openwork_core.session.trace import SpanEnd, SpanFinish
from openwork_core.session.updates import DraftCleared
from openwork_core.storage.usage_records import ModelCallRecord, add_usage
from openwork_core.usage import TokenUsage
from openwork_tools.faults import faultpoint

T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class CompletedResponse:
    """A completed response not yet written: its row, its submission's usage record, the
    fingerprint the next call compares with, and its model call's span (ended at ``ended``)."""

    row: OutgoingMessage
    record: ModelCallRecord
    fingerprint: RequestFingerprint
    span: SpanId
    reported: TokenUsage | None
    ended: SpanEnd


class AssistantCommitter:
    """One turn's assistant writes; ``usage`` sums the submissions written so far."""

    def __init__(self, turn: TurnContext) -> None:
        self._turn = turn
        self.usage = TurnUsage()

    async def write_ahead(self, response: CompletedResponse) -> RealOrigin:
        """The message alone, before any of its tools runs."""
        turn = self._turn
        record = response.record
        origin = await self._persisted(
            response,
            turn.services.storage.append_assistant(
                turn.spec.turn_id,
                response.row,
                usage=record.usage,
                tool_calls=len(response.row.message.tool_calls),
                call=record,
            ),
            "the turn's progress",
        )
        await self._committed(response, origin)
        return origin

    async def with_results(
        self,
        response: CompletedResponse,
        results: Sequence[OutgoingMessage],
        submission: int | None,
    ) -> tuple[RealOrigin, ...]:
        """A deferred response with the results of its (effect-free) calls and the next
        submission's counter: one statement. The origins are the message's, then the results'."""
        turn = self._turn
        origins = await self._persisted(
            response,
            turn.services.storage.append_step(
                turn.spec.turn_id,
                response.row,
                results,
                usage=response.record.usage,
                call=response.record,
                submission=submission,
            ),
            "a tool result" if results else "the turn's progress",
        )
        await self._committed(response, origins[0])
        return origins

    def unwritten(self, response: CompletedResponse, code: str) -> None:
        """``response`` will never be written: its span ends failed, naming no message."""
        self._turn.services.trace.close_span(
            response.span, SpanFinish("failed", error_code=code, ended=response.ended)
        )

    async def _persisted(self, response: CompletedResponse, write: Awaitable[T], what: str) -> T:
        try:
            return await persisted(write, what)
        except TurnFailure:
            self.unwritten(response, "persistence_error")
            raise

    async def _committed(self, response: CompletedResponse, origin: RealOrigin) -> None:
        services = self._turn.services
        record = response.record
        services.call_ledger.previous = response.fingerprint
        self.usage = add_usage(self.usage, record.usage)
        log_record(record)
        faultpoint("assistant_committed")
        reported = response.reported
        services.trace.close_span(
            response.span,
            SpanFinish(
                "succeeded",
                input_tokens=reported.input_tokens if reported else None,
                output_tokens=reported.output_tokens if reported else None,
                response_message_id=origin.message_id,
                ended=response.ended,
            ),
        )
        await in_chat_state(services.chat.commit_draft(committed(response.row, origin)))
        self._turn.emit(DraftCleared())
