"""One tool call, from the model's request to its persisted result (session-runtime.md §5)."""

from __future__ import annotations

from typing import assert_never

import orjson

from openwork_chat_state.messages import TextBlock, ToolCallBlock, ToolResultBlock, ToolResultState
from openwork_core.session.toolset import (
    Agent,
    ConversationHistory,
    NotFound,
    Registered,
    ResolvedTurnTool,
    UpdatePlan,
)
from openwork_tools.definition import RiskHint

TERMINATED_TEXT = "tool was not executed because the turn already terminated"
"""The result of every call left in a response after one call terminated the turn (§4)."""


def doom_loop_text(name: str) -> str:
    return f"doom loop detected for tool '{name}'"


def invalid_input_text(detail: str) -> str:
    return f"invalid tool input: {detail}"


def normalized_arguments(input_json: str) -> str | None:
    """The call's arguments with sorted keys, or None when they are not a JSON object."""
    try:
        value = orjson.loads(input_json or "{}")
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


class DoomLoopCounter:
    """Consecutive identical calls (same name, same normalized arguments) within a turn."""

    def __init__(self, threshold: int) -> None:
        self._threshold = threshold
        self._last: tuple[str, str] | None = None
        self._count = 0

    def reset(self) -> None:
        self._last = None
        self._count = 0

    def observe(self, name: str, normalized: str) -> bool:
        """Count this call; True when it reaches the threshold (it must not run)."""
        key = (name, normalized)
        self._count = self._count + 1 if key == self._last else 1
        self._last = key
        return self._count >= self._threshold


def text_result(call: ToolCallBlock, text: str, state: ToolResultState) -> ToolResultBlock:
    return ToolResultBlock(id=call.id, name=call.name, output=(TextBlock(text=text),), state=state)


def step_effect_free(input_json: str, resolved: ResolvedTurnTool, risk: RiskHint | None) -> bool:
    """Whether a call can neither have a side effect nor ask the user (docs/architecture.md "One
    transaction per steady call"): arguments that are not an object and an unknown tool get an
    error result; ``conversation_history`` reads the transcript; a registry tool only when it is
    ``READ_ONLY`` (read, grep, glob, list: nothing to authorize, no card). ``update_plan``,
    sub-agent control tools and every other tool may have an effect."""
    if normalized_arguments(input_json) is None:
        return True
    match resolved:
        case NotFound() | ConversationHistory():
            return True
        case Registered():
            return risk is RiskHint.READ_ONLY
        case UpdatePlan() | Agent():
            return False
        case _:
            assert_never(resolved)
