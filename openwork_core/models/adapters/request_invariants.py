"""Protocol invariants of the requests a runtime sends (DESIGN.md §4.8), pure.

- every tool call has exactly one result, in the role-tool messages right after its assistant
  message, and no result answers a call that is not open;
- no system message after the leading system part(s);
- within a turn and without compaction, each request's conversation extends the previous one's.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from openwork_chat_state.messages import Message, Role
from openwork_core.models.port import ModelRequest


def conversation_violations(messages: Sequence[Message]) -> list[str]:
    """Tool-call/result pairing and the placement of system messages in one request."""
    found: list[str] = []
    open_calls: list[str] = []
    conversation_started = False
    for position, message in enumerate(messages):
        if message.role is Role.SYSTEM:
            if conversation_started:
                found.append(f"system message at position {position}, inside the conversation")
            continue
        conversation_started = True
        if message.role is Role.TOOL:
            results = message.tool_results
            if len(results) != 1 or len(message.content) != 1:
                found.append(f"tool message at {position} holds {len(message.content)} blocks")
            for result in results:
                if result.id in open_calls:
                    open_calls.remove(result.id)
                else:
                    found.append(f"tool result {result.id!r} at {position} answers no open call")
            continue
        if open_calls:
            found.append(f"tool calls {open_calls} have no result before position {position}")
            open_calls = []
        if message.role is Role.ASSISTANT:
            ids = [call.id for call in message.tool_calls]
            if len(set(ids)) != len(ids):
                found.append(f"assistant message at {position} repeats a tool call id: {ids}")
            open_calls = ids
        elif message.tool_calls or message.tool_results:
            found.append(f"{message.role} message at {position} holds tool calls or results")
    if open_calls:
        found.append(f"tool calls {open_calls} have no result at the end of the request")
    return found


def _conversation(request: ModelRequest) -> tuple[Message, ...]:
    return tuple(m for m in request.messages if m.role is not Role.SYSTEM)


def prefix_violations(requests: Sequence[ModelRequest]) -> list[str]:
    """Each request's conversation (non-system messages) starts with the whole conversation of
    the request before it. Only meaningful within one turn and without compaction."""
    found: list[str] = []
    for number, (before, after) in enumerate(itertools.pairwise(requests), start=2):
        previous, current = _conversation(before), _conversation(after)
        if current[: len(previous)] != previous:
            found.append(
                f"request {number} does not extend the conversation of request {number - 1}"
            )
    return found


def request_violations(requests: Sequence[ModelRequest], *, check_prefix: bool) -> list[str]:
    found = [
        f"request {number}: {problem}"
        for number, request in enumerate(requests, start=1)
        for problem in conversation_violations(request.messages)
    ]
    if check_prefix:
        found += prefix_violations(requests)
    return found
