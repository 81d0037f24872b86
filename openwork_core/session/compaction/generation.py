"""Calling the summary model with retries (compaction.md §3.3).

The same request, up to three attempts, each bounded (120 s); a pause after a failure (3 s). Model
errors, stream errors, timeouts and validation failures all retry; a tool-call stream event fails
the attempt at once. Each failure is classified for diagnostics only. The bounds, the pause and
the pause function are injectable so tests never wait.
"""

from __future__ import annotations

import asyncio
import enum
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import structlog

from openwork_core.ids import CompactionId, SessionId
from openwork_core.models.port import (
    ModelCallOptions,
    ModelError,
    ModelErrorKind,
    ModelEvent,
    ModelPort,
    ModelRequest,
    ModelResponse,
    ResponseCompleted,
    RetryHint,
    ToolCallStart,
)
from openwork_core.session.compaction.errors import SummaryInvalid, SummaryRetriesExhausted
from openwork_core.session.compaction.summary import validate_summary
from openwork_core.storage.trace_records import SpanStatus
from openwork_tools.faults import faultpoint

log = structlog.get_logger(__name__)

SUMMARY_MAX_ATTEMPTS = 3
SUMMARY_ATTEMPT_TIMEOUT_S = 120.0
SUMMARY_RETRY_PAUSE_S = 3.0


class SummaryFailureClass(enum.StrEnum):
    """The §3.3 classes (written to the summary sub-span status)."""

    DEGENERATE = "degenerate"
    DETERMINISTIC = "deterministic"
    INPUT_OVERFLOW = "input_overflow"
    TRANSIENT = "transient"
    TIMEOUT = "timeout"


_TRANSIENT_KINDS = frozenset(
    {
        ModelErrorKind.RATE_LIMITED,
        ModelErrorKind.OVERLOADED,
        ModelErrorKind.TIMEOUT,
        ModelErrorKind.NETWORK,
        ModelErrorKind.SERVER_ERROR,
        ModelErrorKind.PROTOCOL_ERROR,
        ModelErrorKind.UNKNOWN,
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class SummarySettings:
    max_attempts: int = SUMMARY_MAX_ATTEMPTS
    attempt_timeout_s: float = SUMMARY_ATTEMPT_TIMEOUT_S
    retry_pause_s: float = SUMMARY_RETRY_PAUSE_S
    pause: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("a summary needs at least one attempt")


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryAttempt:
    """One attempt: its id and, when it failed, the class and the reason."""

    attempt_id: str
    failure: SummaryFailureClass | None = None
    detail: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryOutcome:
    summary: str
    response: ModelResponse
    attempts: tuple[SummaryAttempt, ...]


class _AttemptFailed(Exception):
    def __init__(self, failure: SummaryFailureClass, detail: str) -> None:
        super().__init__(detail)
        self.failure = failure
        self.detail = detail


def summary_attempt_id(session_id: SessionId, compaction_id: CompactionId, attempt: int) -> str:
    """``<session-id>-compaction-<uuid>-summary-<n>``; ``compaction_id`` is the uuid."""
    return f"{session_id}-compaction-{compaction_id}-summary-{attempt}"


def classify_model_error(error: ModelError) -> SummaryFailureClass:
    if error.kind is ModelErrorKind.CONTEXT_OVERFLOW:
        return SummaryFailureClass.INPUT_OVERFLOW
    if error.kind is ModelErrorKind.TIMEOUT:
        return SummaryFailureClass.TIMEOUT
    if error.kind in _TRANSIENT_KINDS or error.retry is not RetryHint.NEVER:
        return SummaryFailureClass.TRANSIENT
    return SummaryFailureClass.DETERMINISTIC


async def _close(stream: AsyncIterator[ModelEvent]) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()


async def _one_attempt(
    port: ModelPort, request: ModelRequest, options: ModelCallOptions
) -> ModelResponse:
    stream = port.invoke(request, options)
    completed: ModelResponse | None = None
    try:
        async for event in stream:
            faultpoint("summary_streaming")
            if isinstance(event, ToolCallStart):
                raise _AttemptFailed(
                    SummaryFailureClass.DEGENERATE, "the summary model started a tool call"
                )
            if isinstance(event, ResponseCompleted):
                if completed is not None:
                    raise _AttemptFailed(
                        SummaryFailureClass.TRANSIENT, "the model completed the response twice"
                    )
                completed = event.response
    finally:
        await _close(stream)
    if completed is None:
        raise _AttemptFailed(
            SummaryFailureClass.TRANSIENT, "the stream ended without a completed response"
        )
    return completed


async def _attempt(
    port: ModelPort, request: ModelRequest, attempt_id: str, settings: SummarySettings
) -> tuple[str, ModelResponse]:
    options = ModelCallOptions(
        model_attempt_id=attempt_id,
        idle_timeout_s=settings.attempt_timeout_s,
        total_timeout_s=settings.attempt_timeout_s,
    )
    try:
        async with asyncio.timeout(settings.attempt_timeout_s):
            response = await _one_attempt(port, request, options)
    except TimeoutError as exc:
        raise _AttemptFailed(SummaryFailureClass.TIMEOUT, "the summary attempt timed out") from exc
    except ModelError as exc:
        raise _AttemptFailed(classify_model_error(exc), exc.message) from exc
    except _AttemptFailed:
        raise
    except Exception as exc:  # a broken stream is one more failed attempt (§3.3: all retry)
        raise _AttemptFailed(
            SummaryFailureClass.DETERMINISTIC, f"{type(exc).__name__}: {exc}"
        ) from exc
    try:
        return validate_summary(response), response
    except SummaryInvalid as exc:
        raise _AttemptFailed(SummaryFailureClass.DEGENERATE, exc.reason) from exc


async def generate_summary(
    port: ModelPort,
    request: ModelRequest,
    *,
    session_id: SessionId,
    compaction_id: CompactionId,
    settings: SummarySettings | None = None,
) -> SummaryOutcome:
    """Up to ``max_attempts`` attempts of the same request; ``SummaryRetriesExhausted`` after."""
    settings = settings or SummarySettings()
    attempts: list[SummaryAttempt] = []
    for number in range(1, settings.max_attempts + 1):
        attempt_id = summary_attempt_id(session_id, compaction_id, number)
        started = time.monotonic()
        try:
            summary, response = await _attempt(port, request, attempt_id, settings)
        except _AttemptFailed as failed:
            _log_call(request.model, started, SpanStatus.FAILED, None, None)
            attempts.append(
                SummaryAttempt(attempt_id=attempt_id, failure=failed.failure, detail=failed.detail)
            )
            log.warning(
                "compaction.summary_attempt_failed",
                attempt_id=attempt_id,
                failure=failed.failure.value,
                detail=failed.detail,
            )
            if number < settings.max_attempts:
                await settings.pause(settings.retry_pause_s)
            continue
        usage = response.usage
        _log_call(
            request.model,
            started,
            SpanStatus.SUCCEEDED,
            usage.input_tokens if usage else None,
            usage.output_tokens if usage else None,
        )
        attempts.append(SummaryAttempt(attempt_id=attempt_id))
        return SummaryOutcome(summary=summary, response=response, attempts=tuple(attempts))
    raise SummaryRetriesExhausted(
        f"the summary failed {settings.max_attempts} times; last: {attempts[-1].detail}",
        tuple(a.failure.value for a in attempts if a.failure is not None),
    )


def _log_call(
    model: str,
    started: float,
    status: SpanStatus,
    input_tokens: int | None,
    output_tokens: int | None,
) -> None:
    """One ``model.call`` line per summary submission, like the turn's model calls."""
    log.info(
        "model.call",
        name="compaction summary",
        model=model,
        status=status.value,
        duration_ms=int((time.monotonic() - started) * 1000),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )
