"""Protocol invariants checked on every request body the fake provider receives (DESIGN.md §4.8):
every assistant tool call is followed by exactly one result, and no system message appears after
the leading system part(s)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def _items(value: object) -> Sequence[object]:
    return value if isinstance(value, list) else []


def chat_violations(body: Mapping[str, object]) -> list[str]:
    """OpenAI Chat Completions ``messages``: tool messages right after their assistant message,
    one per call; ``system``/``developer`` only at the start."""
    found: list[str] = []
    pending: list[str] = []
    conversation_started = False
    for position, message in enumerate(_items(body.get("messages"))):
        if not isinstance(message, Mapping):
            found.append(f"message {position} is not an object")
            continue
        role = message.get("role")
        if role in ("system", "developer"):
            if conversation_started:
                found.append(f"a {role} message at position {position}, inside the conversation")
            continue
        conversation_started = True
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id in pending:
                pending.remove(str(call_id))
            else:
                found.append(f"tool message {call_id!r} at {position} answers no open tool call")
            continue
        if pending:
            found.append(f"tool calls {pending} have no result before position {position}")
            pending = []
        if role == "assistant":
            for call in _items(message.get("tool_calls")):
                if isinstance(call, Mapping):
                    pending.append(str(call.get("id")))
    if pending:
        found.append(f"tool calls {pending} have no result at the end of the request")
    return found


def anthropic_violations(body: Mapping[str, object]) -> list[str]:
    """Anthropic Messages: system only in the ``system`` parameter; each assistant ``tool_use`` is
    answered by exactly one ``tool_result`` in the very next (user) message."""
    found: list[str] = []
    pending: list[str] = []
    for position, message in enumerate(_items(body.get("messages"))):
        if not isinstance(message, Mapping):
            found.append(f"message {position} is not an object")
            continue
        role = message.get("role")
        if role not in ("user", "assistant"):
            found.append(f"a {role!r} message at position {position}")
        blocks = [b for b in _items(message.get("content")) if isinstance(b, Mapping)]
        results = [str(b.get("tool_use_id")) for b in blocks if b.get("type") == "tool_result"]
        if (pending or results) and (role != "user" or sorted(results) != sorted(pending)):
            found.append(
                f"message {position} answers tool calls {results}, expected exactly {pending}"
            )
        pending = []
        if role == "assistant":
            pending = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
    if pending:
        found.append(f"tool calls {pending} have no result at the end of the request")
    return found


def responses_violations(body: Mapping[str, object]) -> list[str]:
    """OpenAI Responses ``input``: each ``function_call`` answered by exactly one
    ``function_call_output`` before the next message; system messages only at the start. With
    ``store: false`` the server keeps nothing: no item may carry an ``id``, and a ``reasoning``
    item must travel with its ``encrypted_content``."""
    found: list[str] = []
    pending: list[str] = []
    conversation_started = False
    stateless = body.get("store") is False
    for position, item in enumerate(_items(body.get("input"))):
        if not isinstance(item, Mapping):
            found.append(f"input item {position} is not an object")
            continue
        if stateless and "id" in item:
            found.append(f"input item {position} carries an id the server cannot know")
        if item.get("type") == "reasoning":
            if not (stateless and item.get("encrypted_content")):
                found.append(f"reasoning item {position} without encrypted content")
            continue
        kind, role = item.get("type", "message"), item.get("role")
        if kind == "message" and role in ("system", "developer"):
            if conversation_started:
                found.append(f"a {role} message at position {position}, inside the conversation")
            continue
        conversation_started = True
        if kind == "function_call_output":
            call_id = str(item.get("call_id"))
            if call_id in pending:
                pending.remove(call_id)
            else:
                found.append(f"output {call_id!r} at {position} answers no open function call")
            continue
        if kind == "function_call":
            pending.append(str(item.get("call_id")))
            continue
        if pending:
            found.append(f"function calls {pending} have no output before position {position}")
            pending = []
    if pending:
        found.append(f"function calls {pending} have no output at the end of the request")
    return found
