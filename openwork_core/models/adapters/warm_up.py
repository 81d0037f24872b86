"""Pay the SDKs' first-call costs before the first model call (issue 13 §3).

Importing an SDK is only part of what its first call costs: ``httpcore`` imports its ``anyio``
backend on the first connection and pydantic completes the SDK's stream-event models on the
first event it decodes (for the Responses union, most of a second). ``warm_up`` runs one real
streaming call per adapter kind — the adapter itself, over loopback HTTP, against a canned
answer served by a private server on its own event loop — so all of it happens once, in a
background thread started when the daemon listens, and a user's first call costs what the
second does. Nothing leaves the machine; no key is used; the daemon's clients are not touched.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from typing import Protocol, TypeAlias, runtime_checkable

import orjson
import structlog

from openwork_chat_state.messages import Message, Role, TextBlock
from openwork_core.models.adapters import build_model_port
from openwork_core.models.port import ModelCallOptions, ModelRequest
from openwork_core.storage.records import ProviderKind

log = structlog.get_logger(__name__)

Event: TypeAlias = dict[str, object]

_USAGE: Event = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
_CHAT: list[Event] = [
    {"id": "w", "object": "chat.completion.chunk", "created": 0, "model": "w", "choices": [c]}
    for c in (
        {"index": 0, "delta": {"role": "assistant", "content": "ok"}, "finish_reason": None},
        {
            "index": 0,
            "delta": {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "c",
                        "type": "function",
                        "function": {"name": "w", "arguments": "{}"},
                    }
                ]
            },
            "finish_reason": None,
        },
        {"index": 0, "delta": {}, "finish_reason": "tool_calls"},
    )
] + [{"id": "w", "object": "chat.completion.chunk", "created": 0, "model": "w", "choices": []}]
_CHAT[-1]["usage"] = _USAGE

_RESPONSE: Event = {
    "id": "w",
    "object": "response",
    "created_at": 0,
    "model": "w",
    "status": "completed",
    "output": [],
    "parallel_tool_calls": False,
    "tool_choice": "auto",
    "tools": [],
    "usage": {
        "input_tokens": 1,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 2,
    },
}
# Items without ``status``, as OpenAI-compatible servers send them: the SDK then constructs the
# event field by field (another validator to build) instead of validating it whole.
_TEXT_ITEM: Event = {"type": "message", "id": "m", "role": "assistant", "content": []}
_CALL_ITEM: Event = {
    "type": "function_call",
    "id": "f",
    "call_id": "c",
    "name": "w",
    "arguments": "",
}
_REASONING_ITEM: Event = {"type": "reasoning", "id": "r", "summary": []}
_RESPONSES: list[Event] = [
    {"type": "response.created", "response": _RESPONSE},
    {"type": "response.output_item.added", "output_index": 0, "item": _TEXT_ITEM},
    {
        "type": "response.output_text.delta",
        "item_id": "m",
        "output_index": 0,
        "content_index": 0,
        "delta": "ok",
        "logprobs": [],
    },
    {"type": "response.output_item.done", "output_index": 0, "item": _TEXT_ITEM},
    {"type": "response.output_item.added", "output_index": 1, "item": _REASONING_ITEM},
    {
        "type": "response.reasoning_summary_text.delta",
        "item_id": "r",
        "output_index": 1,
        "summary_index": 0,
        "delta": "w",
    },
    {"type": "response.output_item.done", "output_index": 1, "item": _REASONING_ITEM},
    {"type": "response.output_item.added", "output_index": 2, "item": _CALL_ITEM},
    {
        "type": "response.function_call_arguments.delta",
        "item_id": "f",
        "output_index": 2,
        "delta": "{}",
    },
    {
        "type": "response.function_call_arguments.done",
        "item_id": "f",
        "output_index": 2,
        "name": "w",
        "arguments": "{}",
    },
    {"type": "response.output_item.done", "output_index": 2, "item": _CALL_ITEM},
    {"type": "response.completed", "response": _RESPONSE},
]
for _number, _event in enumerate(_RESPONSES):
    _event["sequence_number"] = _number

_MESSAGE: Event = {
    "id": "w",
    "type": "message",
    "role": "assistant",
    "model": "w",
    "content": [],
    "stop_reason": None,
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}
_ANTHROPIC: list[Event] = [
    {"type": "message_start", "message": _MESSAGE},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
    {"type": "content_block_stop", "index": 0},
    {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
    },
    {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "thinking_delta", "thinking": "w"},
    },
    {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "signature_delta", "signature": "s"},
    },
    {"type": "content_block_stop", "index": 1},
    {
        "type": "content_block_start",
        "index": 2,
        "content_block": {"type": "tool_use", "id": "t", "name": "w", "input": {}},
    },
    {
        "type": "content_block_delta",
        "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": "{}"},
    },
    {"type": "content_block_stop", "index": 2},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 1},
    },
    {"type": "message_stop"},
]


def _sse(path: str) -> bytes:
    if path.endswith("/messages"):
        return b"".join(
            b"event: %s\ndata: %s\n\n" % (str(e["type"]).encode(), orjson.dumps(e))
            for e in _ANTHROPIC
        )
    if path.endswith("/responses"):
        return b"".join(
            b"event: %s\ndata: %s\n\n" % (str(e["type"]).encode(), orjson.dumps(e))
            for e in _RESPONSES
        )
    return b"".join(b"data: %s\n\n" % orjson.dumps(c) for c in _CHAT) + b"data: [DONE]\n\n"


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        path = head.split(" ", 2)[1].split("?", 1)[0]
        headers = dict(
            (name.strip().lower(), value.strip())
            for name, _, value in (line.partition(":") for line in head.split("\r\n")[1:])
        )
        await reader.readexactly(int(headers.get("content-length", "0") or 0))
        body = _sse(path)
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
        )
        await writer.drain()
    finally:
        writer.close()


@runtime_checkable
class _Closable(Protocol):
    """An SDK adapter: it owns an HTTP client."""

    async def aclose(self) -> None: ...


async def _warm(kinds: tuple[ProviderKind, ...]) -> None:
    server = await asyncio.start_server(_answer, "127.0.0.1", 0)
    try:
        base_url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        request = ModelRequest(
            model="w",
            messages=(
                Message(role=Role.SYSTEM, content=(TextBlock(text="w"),)),
                Message(role=Role.USER, content=(TextBlock(text="w"),)),
            ),
            max_output_tokens=16,
        )
        options = ModelCallOptions(model_attempt_id="warm-up", max_transport_attempts=1)
        for kind in kinds:
            port = build_model_port(kind.value, base_url, "warm-up")
            try:
                async for _ in port.invoke(request, options):
                    pass
            finally:
                if isinstance(port, _Closable):
                    with contextlib.suppress(Exception):
                        await port.aclose()
    finally:
        server.close()


def warm_up(kinds: Iterable[ProviderKind]) -> None:
    """One canned streaming call per kind, on a private loop (blocking: run it in a thread).
    A failure is logged and otherwise ignored: the real call reports its own problems."""
    wanted = tuple(dict.fromkeys(kinds))
    if not wanted:
        return
    try:
        asyncio.run(_warm(wanted))
    except Exception as exc:  # never fatal: it only moves work earlier
        log.warning("models.warm_up_failed", error=f"{type(exc).__name__}: {exc}")
    else:
        log.info("models.warmed_up", kinds=[k.value for k in wanted])
