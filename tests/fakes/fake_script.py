"""The script of the fake provider: what each request is answered with, and the wire renderers.

One step answers one request, whatever its endpoint; the endpoint decides the wire protocol
(OpenAI Chat Completions chunks or Anthropic Messages events).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

Ending: TypeAlias = Literal["complete", "no_finish", "break", "error_event"]


@dataclass(frozen=True, slots=True)
class ToolCallSpec:
    id: str
    name: str
    arguments: str | Mapping[str, object] = ""

    @property
    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """A streamed answer. ``ending``: ``complete`` (finish + usage + terminator), ``no_finish``
    (a clean end without the terminal event), ``break`` (the connection is cut after the output),
    ``error_event`` (an in-stream error object with ``error_code`` after the output)."""

    text: str = ""
    reasoning: str = ""
    reasoning_signature: str | None = None
    tool_calls: tuple[ToolCallSpec, ...] = ()
    finish: str | None = None
    input_tokens: int | None = None
    """``None``: what the request holds as a server would count it, ⌈body bytes / 4⌉ (a real
    count is near the daemon's own estimate; far below it is a suspected truncation)."""
    output_tokens: int = 7
    cached_tokens: int | None = None
    cache_write_tokens: int | None = None
    """Anthropic ``cache_creation_input_tokens``."""
    reasoning_tokens: int | None = None
    reasoning_encrypted: str | None = None
    """Responses: the reasoning item's ``encrypted_content`` (only when the request asked for it
    with ``include``)."""
    chunk_chars: int = 4
    ending: Ending = "complete"
    error_code: str = "server_error"
    error_message: str = "the fake provider failed mid-stream"


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorReply:
    """An HTTP error answer; ``body`` overrides the protocol's usual error body."""

    status: int
    code: str | None = None
    message: str = "the fake provider refused the request"
    headers: tuple[tuple[str, str], ...] = ()
    body: Mapping[str, object] | None = None


@dataclass(slots=True)
class Gate:
    """Holds a response until the test calls ``release()`` (thread-safe)."""

    _event: threading.Event = field(default_factory=threading.Event)

    def release(self) -> None:
        self._event.set()

    @property
    def released(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)


@dataclass(frozen=True, slots=True)
class Held:
    """Answer with ``step`` only once ``gate`` is released."""

    step: Reply | ErrorReply
    gate: Gate


Step: TypeAlias = Reply | ErrorReply | Held


def pieces(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), max(1, size)):
        yield text[start : start + max(1, size)]


# -- OpenAI Chat Completions -----------------------------------------------------------------
def chat_error_body(step: ErrorReply) -> Mapping[str, object]:
    if step.body is not None:
        return step.body
    return {"error": {"message": step.message, "type": "invalid_request_error", "code": step.code}}


def chat_events(step: Reply, model: str, include_usage: bool) -> Iterator[str]:
    """The ``data:`` payloads of a Chat Completions stream (before any cut)."""

    def chunk(delta: Mapping[str, object], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        body = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [choice],
        }
        return json.dumps(body)

    yield chunk({"role": "assistant", "content": ""})
    for piece in pieces(step.reasoning, step.chunk_chars):
        yield chunk({"reasoning_content": piece})
    for piece in pieces(step.text, step.chunk_chars):
        yield chunk({"content": piece})
    for index, call in enumerate(step.tool_calls):
        head = {"index": index, "id": call.id, "type": "function"}
        yield chunk({"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]})
        for piece in pieces(call.arguments_text, step.chunk_chars):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    if step.ending == "error_event":
        yield json.dumps({"error": {"code": step.error_code, "message": step.error_message}})
        return
    if step.ending != "complete":
        return
    finish = step.finish or ("tool_calls" if step.tool_calls else "stop")
    yield chunk({}, finish)
    if include_usage:
        usage: dict[str, object] = {
            "prompt_tokens": step.input_tokens,
            "completion_tokens": step.output_tokens,
            "total_tokens": (step.input_tokens or 0) + step.output_tokens,
        }
        if step.cached_tokens is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": step.cached_tokens}
        if step.reasoning_tokens is not None:
            usage["completion_tokens_details"] = {"reasoning_tokens": step.reasoning_tokens}
        yield json.dumps({**json.loads(chunk({})), "choices": [], "usage": usage})


def chat_sse(payloads: Iterator[str], done: bool) -> Iterator[bytes]:
    for payload in payloads:
        yield f"data: {payload}\n\n".encode()
    if done:
        yield b"data: [DONE]\n\n"


# -- Anthropic Messages ----------------------------------------------------------------------
def anthropic_error_body(step: ErrorReply) -> Mapping[str, object]:
    if step.body is not None:
        return step.body
    return {"type": "error", "error": {"type": step.code or "api_error", "message": step.message}}


def anthropic_events(step: Reply, model: str) -> Iterator[tuple[str, Mapping[str, object]]]:
    usage = {"input_tokens": step.input_tokens, "output_tokens": 1}
    if step.cached_tokens is not None:
        usage["cache_read_input_tokens"] = step.cached_tokens
    if step.cache_write_tokens is not None:
        usage["cache_creation_input_tokens"] = step.cache_write_tokens
    message = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    yield "message_start", {"type": "message_start", "message": message}
    index = 0

    def block(
        start: Mapping[str, object], deltas: list[Mapping[str, object]]
    ) -> Iterator[tuple[str, Mapping[str, object]]]:
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": start,
            },
        )
        for delta in deltas:
            yield (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        if step.ending == "complete":
            yield "content_block_stop", {"type": "content_block_stop", "index": index}

    if step.reasoning:
        deltas: list[Mapping[str, object]] = [
            {"type": "thinking_delta", "thinking": p}
            for p in pieces(step.reasoning, step.chunk_chars)
        ]
        if step.reasoning_signature:
            deltas.append({"type": "signature_delta", "signature": step.reasoning_signature})
        yield from block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
        index += 1
    if step.text:
        deltas = [{"type": "text_delta", "text": p} for p in pieces(step.text, step.chunk_chars)]
        yield from block({"type": "text", "text": ""}, deltas)
        index += 1
    for call in step.tool_calls:
        deltas = [
            {"type": "input_json_delta", "partial_json": p}
            for p in pieces(call.arguments_text, step.chunk_chars)
        ]
        yield from block(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}, deltas
        )
        index += 1
    if step.ending == "error_event":
        error = {"type": step.error_code, "message": step.error_message}
        yield "error", {"type": "error", "error": error}
        return
    if step.ending != "complete":
        return
    stop = step.finish or ("tool_use" if step.tool_calls else "end_turn")
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": step.output_tokens},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def named_sse(events: Iterator[tuple[str, Mapping[str, object]]]) -> Iterator[bytes]:
    for name, data in events:
        yield f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


# -- OpenAI Responses --------------------------------------------------------------------------
def responses_events(
    step: Reply, model: str, include: tuple[str, ...] = ()
) -> Iterator[tuple[str, Mapping[str, object]]]:
    response: dict[str, object] = {
        "id": "resp_fake",
        "object": "response",
        "created_at": 0,
        "model": model,
        "status": "in_progress",
        "output": [],
    }
    sequence = iter(range(1_000_000))

    def event(kind: str, **fields: object) -> tuple[str, Mapping[str, object]]:
        return kind, {"type": kind, "sequence_number": next(sequence), **fields}

    yield event("response.created", response=response)
    index = 0
    if step.reasoning:
        item: dict[str, object] = {"type": "reasoning", "id": "rs_1", "summary": []}
        yield event("response.output_item.added", item=item, output_index=index)
        for piece in pieces(step.reasoning, step.chunk_chars):
            yield event(
                "response.reasoning_summary_text.delta",
                delta=piece,
                item_id="rs_1",
                output_index=index,
                summary_index=0,
            )
        item = {**item, "summary": [{"type": "summary_text", "text": step.reasoning}]}
        if step.reasoning_encrypted is not None and "reasoning.encrypted_content" in include:
            item["encrypted_content"] = step.reasoning_encrypted
        yield event("response.output_item.done", item=item, output_index=index)
        index += 1
    if step.text:
        item = {"type": "message", "id": "msg_1", "role": "assistant", "content": []}
        yield event("response.output_item.added", item=item, output_index=index)
        for piece in pieces(step.text, step.chunk_chars):
            yield event(
                "response.output_text.delta",
                delta=piece,
                item_id="msg_1",
                output_index=index,
                content_index=0,
                logprobs=[],
            )
        yield event("response.output_item.done", item=item, output_index=index)
        index += 1
    for call in step.tool_calls:
        item = {
            "type": "function_call",
            "id": f"fc_{index}",
            "call_id": call.id,
            "name": call.name,
            "arguments": "",
        }
        yield event("response.output_item.added", item=item, output_index=index)
        for piece in pieces(call.arguments_text, step.chunk_chars):
            yield event(
                "response.function_call_arguments.delta",
                delta=piece,
                item_id=item["id"],
                output_index=index,
            )
        yield event(
            "response.function_call_arguments.done",
            arguments=call.arguments_text,
            name=call.name,
            item_id=item["id"],
            output_index=index,
        )
        yield event("response.output_item.done", item=item, output_index=index)
        index += 1
    if step.ending == "error_event":
        error = {"code": step.error_code, "message": step.error_message}
        yield event("response.failed", response={**response, "status": "failed", "error": error})
        return
    if step.ending != "complete":
        return
    usage = {
        "input_tokens": step.input_tokens,
        "output_tokens": step.output_tokens,
        "total_tokens": (step.input_tokens or 0) + step.output_tokens,
        "input_tokens_details": {"cached_tokens": step.cached_tokens or 0},
        "output_tokens_details": {"reasoning_tokens": step.reasoning_tokens or 0},
    }
    if step.finish in ("max_output_tokens", "content_filter"):
        final = {
            **response,
            "status": "incomplete",
            "incomplete_details": {"reason": step.finish},
            "usage": usage,
        }
        yield event("response.incomplete", response=final)
        return
    yield event("response.completed", response={**response, "status": "completed", "usage": usage})
