"""Helpers shared by the adapter tests over loopback."""

from __future__ import annotations

from openwork_chat_state.messages import Message, Role, TextBlock
from openwork_core.models.port import (
    ModelCallOptions,
    ModelError,
    ModelEvent,
    ModelPort,
    ModelRequest,
    ModelResponse,
    ResponseCompleted,
)

OPTIONS = ModelCallOptions(model_attempt_id="attempt-1", max_transport_attempts=1)
"""One transport attempt: an HTTP error reaches the test instead of being retried by the SDK."""

SYSTEM = Message(role=Role.SYSTEM, content=(TextBlock(text="You are a test."),))


async def outcome(
    port: ModelPort, request: ModelRequest, options: ModelCallOptions = OPTIONS
) -> tuple[list[ModelEvent], ModelError | None]:
    """The events seen, and the ModelError that ended the call (None when it completed)."""
    seen: list[ModelEvent] = []
    try:
        async for event in port.invoke(request, options):
            seen.append(event)
    except ModelError as error:
        return seen, error
    return seen, None


async def failure(
    port: ModelPort, request: ModelRequest, options: ModelCallOptions = OPTIONS
) -> tuple[list[ModelEvent], ModelError]:
    seen, error = await outcome(port, request, options)
    assert error is not None, f"the call succeeded: {seen}"
    return seen, error


def completed(events: list[ModelEvent]) -> ModelResponse:
    """The single completion, which must be the last event."""
    finals = [e for e in events if isinstance(e, ResponseCompleted)]
    assert len(finals) == 1
    assert events[-1] is finals[0]
    return finals[0].response
