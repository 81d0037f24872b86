"""Summary attempts and retries (compaction.md §3.3). Pauses are injected: no test waits."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from openwork_chat_state.messages import user_text
from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.models.port import (
    DeliveryState,
    ErrorPhase,
    FinishReason,
    ModelError,
    ModelErrorKind,
    ModelEvent,
    ModelRequest,
    RetryHint,
    TokenUsage,
)
from openwork_core.session.compaction.errors import SummaryRetriesExhausted
from openwork_core.session.compaction.generation import (
    SummaryFailureClass,
    SummarySettings,
    classify_model_error,
    generate_summary,
    summary_attempt_id,
)
from tests.unit.compaction.compaction_support import valid_summary

REQUEST = ModelRequest(model="m", messages=(user_text("hi"),))


class Pauses:
    def __init__(self) -> None:
        self.seen: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seen.append(seconds)


def settings(pauses: Pauses, timeout: float = 120.0) -> SummarySettings:
    return SummarySettings(attempt_timeout_s=timeout, pause=pauses)


def model_error(kind: ModelErrorKind, retry: RetryHint = RetryHint.NEVER) -> ModelError:
    return ModelError(
        kind,
        f"{kind} happened",
        phase=ErrorPhase.RESPONSE_HEADERS,
        delivery=DeliveryState.NOT_SENT,
        retry=retry,
    )


async def test_the_first_valid_summary_is_returned_after_one_attempt() -> None:
    pauses = Pauses()
    model = ScriptedModel(
        [ScriptedResponse(text=valid_summary(), usage=TokenUsage(input_tokens=9, output_tokens=3))]
    )
    outcome = await generate_summary(
        model, REQUEST, session_id="s1", compaction_id="c1", settings=settings(pauses)
    )
    assert outcome.summary == valid_summary()
    assert outcome.response.usage == TokenUsage(input_tokens=9, output_tokens=3)
    assert [a.attempt_id for a in outcome.attempts] == ["s1-compaction-c1-summary-1"]
    assert pauses.seen == []


async def test_an_invalid_then_valid_summary_is_accepted_on_the_second_attempt() -> None:
    """§10: invalid-then-valid accepted; the same request is sent again."""
    pauses = Pauses()
    model = ScriptedModel(
        [ScriptedResponse(text="too short"), ScriptedResponse(text=valid_summary())]
    )
    outcome = await generate_summary(
        model, REQUEST, session_id="s1", compaction_id="c1", settings=settings(pauses)
    )
    assert outcome.summary == valid_summary()
    assert [a.failure for a in outcome.attempts] == [SummaryFailureClass.DEGENERATE, None]
    assert model.requests == [REQUEST, REQUEST]
    assert [o.model_attempt_id for o in model.options] == [
        "s1-compaction-c1-summary-1",
        "s1-compaction-c1-summary-2",
    ]
    assert pauses.seen == [3.0]


async def test_three_failures_raise_summary_retries_exhausted_with_each_class() -> None:
    """§3.3: model errors, validation failures and truncation all retry; after 3 it fails."""
    pauses = Pauses()
    model = ScriptedModel(
        [
            model_error(ModelErrorKind.OVERLOADED, RetryHint.BACKOFF),
            ScriptedResponse(text=valid_summary(), finish_reason=FinishReason.LENGTH),
            model_error(ModelErrorKind.CONTEXT_OVERFLOW),
        ]
    )
    with pytest.raises(SummaryRetriesExhausted) as caught:
        await generate_summary(
            model, REQUEST, session_id="s1", compaction_id="c1", settings=settings(pauses)
        )
    assert caught.value.code == "summary_retries_exhausted"
    assert caught.value.failure_classes == ("transient", "degenerate", "input_overflow")
    assert pauses.seen == [3.0, 3.0], "a pause after each failure but the last"
    assert model.remaining_steps == 0


async def test_a_tool_call_event_fails_the_attempt_immediately() -> None:
    """§3.2: the stream is abandoned at the tool-call start."""
    seen_after_start: list[ModelEvent] = []

    async def stream(_: ModelRequest) -> AsyncIterator[ModelEvent]:
        from openwork_core.models.adapters.scripted import scripted_events

        for event in scripted_events(
            ScriptedResponse(text="x", tool_calls=(("c1", "read", "{}"),))
        ):
            if seen_after_start or event.type == "tool_call_start":
                seen_after_start.append(event)
            yield event

    model = ScriptedModel([stream, ScriptedResponse(text=valid_summary())])
    outcome = await generate_summary(
        model, REQUEST, session_id="s", compaction_id="c", settings=settings(Pauses())
    )
    assert outcome.attempts[0].failure is SummaryFailureClass.DEGENERATE
    assert len(seen_after_start) == 1, "nothing is read after the tool-call start"


async def test_an_attempt_is_bounded_and_a_timeout_is_retried() -> None:
    never = asyncio.Event()

    async def hang(_: ModelRequest) -> AsyncIterator[ModelEvent]:
        await never.wait()
        yield  # type: ignore[misc]

    model = ScriptedModel([hang, ScriptedResponse(text=valid_summary())])
    outcome = await generate_summary(
        model, REQUEST, session_id="s", compaction_id="c", settings=settings(Pauses(), timeout=0.01)
    )
    assert outcome.attempts[0].failure is SummaryFailureClass.TIMEOUT
    assert model.options[0].total_timeout_s == 0.01


async def test_a_stream_without_completion_fails_the_attempt() -> None:
    model = ScriptedModel(
        [
            ScriptedResponse(text=valid_summary(), ending="no_completion"),
            ScriptedResponse(text=valid_summary()),
        ]
    )
    outcome = await generate_summary(
        model, REQUEST, session_id="s", compaction_id="c", settings=settings(Pauses())
    )
    assert outcome.attempts[0].failure is SummaryFailureClass.TRANSIENT


@pytest.mark.parametrize(
    ("kind", "retry", "expected"),
    [
        (ModelErrorKind.CONTEXT_OVERFLOW, RetryHint.NEVER, SummaryFailureClass.INPUT_OVERFLOW),
        (ModelErrorKind.TIMEOUT, RetryHint.BACKOFF, SummaryFailureClass.TIMEOUT),
        (ModelErrorKind.RATE_LIMITED, RetryHint.AFTER_MILLIS, SummaryFailureClass.TRANSIENT),
        (ModelErrorKind.NETWORK, RetryHint.BACKOFF, SummaryFailureClass.TRANSIENT),
        (ModelErrorKind.AUTHENTICATION, RetryHint.NEVER, SummaryFailureClass.DETERMINISTIC),
        (ModelErrorKind.INVALID_REQUEST, RetryHint.NEVER, SummaryFailureClass.DETERMINISTIC),
    ],
)
def test_model_errors_are_classified_for_diagnostics(
    kind: ModelErrorKind, retry: RetryHint, expected: SummaryFailureClass
) -> None:
    assert classify_model_error(model_error(kind, retry)) is expected


def test_the_attempt_id_names_session_compaction_and_attempt() -> None:
    assert summary_attempt_id("sess", "uuid", 2) == "sess-compaction-uuid-summary-2"


def test_settings_need_at_least_one_attempt() -> None:
    with pytest.raises(ValueError, match="at least one"):
        SummarySettings(max_attempts=0)


async def test_a_stream_that_breaks_with_another_exception_is_one_more_failed_attempt() -> None:
    async def broken(_: ModelRequest) -> AsyncIterator[ModelEvent]:
        raise RuntimeError("decoder bug")
        yield

    model = ScriptedModel([broken, ScriptedResponse(text=valid_summary())])
    outcome = await generate_summary(
        model, REQUEST, session_id="s", compaction_id="c", settings=settings(Pauses())
    )
    assert outcome.attempts[0].failure is SummaryFailureClass.DETERMINISTIC
    assert outcome.attempts[0].detail == "RuntimeError: decoder bug"
