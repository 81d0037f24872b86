"""``ScriptedModel``: an in-process ``ModelPort`` that answers from a script (DESIGN.md §5).

Each ``invoke`` takes the next step:

- ``ScriptedResponse``: streamed as real adapters stream it (reasoning, text, tool calls with
  argument deltas, ``response_completed`` with ``tool_use`` when there are tool calls); its
  ``error`` is raised after that output (delivery ``semantic_output_emitted``); its ``ending``
  can drop the completion or send two (session-runtime.md §6);
- a ``ModelError``: raised before any output;
- an async callable ``(request) -> AsyncIterator[ModelEvent]``: its events are passed through,
  so a test can hold the model on an ``asyncio.Event`` (build events with ``scripted_events``).

Every request is recorded (``requests``). Running out of steps raises ``ScriptExhausted``.
``invariant_violations()`` checks the recorded requests (``request_invariants``).
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from pydantic import JsonValue

from openwork_core.models.adapters.request_invariants import request_violations
from openwork_core.models.adapters.streaming import EventAssembler
from openwork_core.models.port import (
    SEMANTIC_EVENTS,
    DeliveryState,
    FinishReason,
    ModelCallOptions,
    ModelError,
    ModelEvent,
    ModelRequest,
)
from openwork_core.usage import TokenUsage


@dataclass(frozen=True, slots=True)
class ScriptedToolCall:
    id: str
    name: str
    arguments: str | Mapping[str, JsonValue] = "{}"

    @property
    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


ToolCallLike: TypeAlias = ScriptedToolCall | tuple[str, str, str | Mapping[str, JsonValue]]
Ending: TypeAlias = Literal["complete", "no_completion", "two_completions"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptedResponse:
    text: str = ""
    reasoning: str | None = None
    tool_calls: tuple[ToolCallLike, ...] = ()
    finish_reason: FinishReason | None = None
    """Default: ``tool_use`` with tool calls, else ``stop``."""
    usage: TokenUsage | None = None
    error: ModelError | None = None
    """Raised after the output above, instead of the completion."""
    ending: Ending = "complete"


ScriptedCallable: TypeAlias = Callable[[ModelRequest], AsyncIterator[ModelEvent]]
ScriptedStep: TypeAlias = ScriptedResponse | ModelError | ScriptedCallable


class ScriptExhausted(AssertionError):
    """The model was invoked more often than the script has steps: a test bug, loud on purpose."""


def _tool_call(call: ToolCallLike) -> ScriptedToolCall:
    return call if isinstance(call, ScriptedToolCall) else ScriptedToolCall(*call)


def scripted_events(response: ScriptedResponse) -> list[ModelEvent]:
    """The events of a scripted response up to (and with) its completion(s). Tool-call arguments
    are split into two deltas; arguments that are not JSON raise a protocol ``ModelError``."""
    assembler = EventAssembler()
    events: list[ModelEvent] = []
    if response.reasoning:
        events += assembler.reasoning(response.reasoning)
    events += assembler.text(response.text)
    calls = [_tool_call(call) for call in response.tool_calls]
    for position, call in enumerate(calls):
        events += assembler.tool_call_start(position, call.id, call.name)
        text = call.arguments_text
        half = len(text) // 2
        events += assembler.tool_call_arguments(position, text[:half])
        events += assembler.tool_call_arguments(position, text[half:])
    if response.error is not None or response.ending == "no_completion":
        return events
    default = FinishReason.TOOL_USE if calls else FinishReason.STOP
    finish = response.finish_reason or default
    events += assembler.complete(
        finish_reason=finish,
        raw_finish_reason=finish.value,
        usage=response.usage,
        response_id=None,
        model="scripted",
    )
    if response.ending == "two_completions":
        events.append(events[-1])
    return events


class ScriptedModel:
    """See the module docstring. ``steps`` may be extended later with ``push``."""

    def __init__(self, steps: Iterable[ScriptedStep] = ()) -> None:
        self._steps: deque[ScriptedStep] = deque(steps)
        self.requests: list[ModelRequest] = []
        self.options: list[ModelCallOptions] = []
        self.exhausted = False
        self._changed: asyncio.Condition | None = None

    def push(self, *steps: ScriptedStep) -> None:
        self._steps.extend(steps)

    @property
    def remaining_steps(self) -> int:
        return len(self._steps)

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def wait_for_requests(
        self,
        count: int,
        timeout: float,  # noqa: ASYNC109 - the bound is part of this API, by design
    ) -> list[ModelRequest]:
        """Wait until ``count`` requests arrived (bounded; raises TimeoutError)."""
        condition = self._condition()
        async with asyncio.timeout(timeout), condition:
            await condition.wait_for(lambda: len(self.requests) >= count)
        return list(self.requests)

    def invariant_violations(self, *, check_prefix: bool = False) -> list[str]:
        """Protocol invariants on every recorded request; ``check_prefix`` also requires each
        request to extend the previous one (use it within one turn without compaction)."""
        found = request_violations(self.requests, check_prefix=check_prefix)
        if self.exhausted:
            found.append("the model was invoked after the script ran out of steps")
        return found

    def assert_invariants(self, *, check_prefix: bool = False) -> None:
        found = self.invariant_violations(check_prefix=check_prefix)
        assert not found, "\n".join(found)

    async def invoke(
        self, request: ModelRequest, options: ModelCallOptions
    ) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        self.options.append(options)
        condition = self._condition()
        async with condition:
            condition.notify_all()
        if not self._steps:
            self.exhausted = True
            raise ScriptExhausted(f"ScriptedModel has no step for request {len(self.requests)}")
        step = self._steps.popleft()
        if isinstance(step, ModelError):
            raise step
        if isinstance(step, ScriptedResponse):
            emitted = False
            for event in scripted_events(step):
                emitted = emitted or isinstance(event, SEMANTIC_EVENTS)
                yield event
            if step.error is not None:
                error = step.error
                if emitted:
                    error = error.with_delivery(DeliveryState.SEMANTIC_OUTPUT_EMITTED)
                raise error
            return
        async for event in step(request):
            yield event
