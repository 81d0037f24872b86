"""The Anthropic Messages adapter on the official ``anthropic`` SDK, always streaming.

Events: ``text`` blocks → text, ``thinking`` → reasoning (its signature is kept as a
provider-opaque block of driver ``anthropic``, kind ``thinking``; ``redacted_thinking`` likewise),
``tool_use`` with ``input_json_delta`` → tool calls; ``message_stop`` is the terminal event.
Errors are classified by the body's ``error.type`` (model-providers.md §3), then by status.
Opaque blocks are scoped to this endpoint and the requested model (``opaque``); every request
carries the prompt-cache breakpoints of ``anthropic_encode.with_cache_breakpoints``. Usage: input
is ``input_tokens`` + cache reads + cache writes; ``cache_read_input_tokens`` is the cached input,
``cache_creation_input_tokens`` the cache writes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping

import anthropic
import httpx2
from pydantic import JsonValue

from openwork_core.models.adapters.anthropic_encode import (
    DEFAULT_MAX_TOKENS,
    DRIVER,
    encode_messages,
    encode_system,
    encode_thinking,
    encode_tools,
    with_cache_breakpoints,
)
from openwork_core.models.adapters.error_body import httpx2_transport
from openwork_core.models.adapters.opaque import OpaqueScope, scoped_block
from openwork_core.models.adapters.raw_body import ConfiguredClients, dump_body
from openwork_core.models.adapters.sse import SseStream
from openwork_core.models.adapters.streaming import (
    STREAM_ENDED_EARLY,
    ChunkStream,
    EventAssembler,
    guarded_events,
    json_int,
    json_object,
    json_str,
)
from openwork_core.models.adapters.tls import httpx2_tls
from openwork_core.models.errors import (
    connection_cause,
    http_error,
    request_id,
    stream_error,
    unreachable,
)
from openwork_core.models.port import (
    FinishReason,
    ModelCallOptions,
    ModelError,
    ModelEvent,
    ModelRequest,
)
from openwork_core.usage import TokenUsage

NO_API_KEY = "no-key"
"""Sent when the provider has no key, so the SDK never reads ``ANTHROPIC_API_KEY`` itself."""

_STOP_REASONS: Mapping[str, FinishReason] = {
    "end_turn": FinishReason.STOP,
    "stop_sequence": FinishReason.STOP,
    "max_tokens": FinishReason.LENGTH,
    "tool_use": FinishReason.TOOL_USE,
    "refusal": FinishReason.REFUSAL,
    "pause_turn": FinishReason.INCOMPLETE,
    "model_context_window_exceeded": FinishReason.INCOMPLETE,
}


def map_stop_reason(raw: str) -> FinishReason:
    return _STOP_REASONS.get(raw, FinishReason.UNKNOWN)


async def anthropic_stream(client: anthropic.AsyncAnthropic, path: str, body: bytes) -> SseStream:
    """``POST {base_url}{path}`` with ``body`` as it is (the SDK's public ``post``: headers,
    authentication, retries, status errors); the accepted stream's body is read by
    ``SseStream``. ``post`` wraps the response in an ``AsyncStream`` that is never iterated."""
    stream = await client.post(
        path,
        cast_to=object,
        content=body,
        options={"headers": {"Content-Type": "application/json"}},
        stream=True,
        stream_cls=anthropic.AsyncStream[object],
    )
    return SseStream(stream.response)


class MessagesStreamDecoder:
    """Decodes the stream's events (JSON objects, by ``type``) into ``ModelEvent``s. Like the
    SDK's lenient construction, a field of the wrong type counts as absent and an event of
    another type (``ping``) is ignored; an ``error`` event is the provider's in-stream error."""

    def __init__(
        self, provider_request_id: str | None = None, scope: OpaqueScope | None = None
    ) -> None:
        self.provider_request_id = provider_request_id
        self._scope = scope
        self._assembler = EventAssembler()
        self._kinds: dict[int, str] = {}
        self._thinking: dict[int, list[str]] = {}
        self._signatures: dict[int, list[str]] = {}
        self._stop_reason: str | None = None
        self._stopped = False
        self._response_id: str | None = None
        self._model: str | None = None
        self._input = 0
        self._cached: int | None = None
        self._written: int | None = None
        self._output: int | None = None

    def feed(self, event: object) -> list[ModelEvent]:
        fields = json_object(event)
        kind = fields.get("type")
        index = json_int(fields.get("index"))
        if kind == "content_block_delta" and index is not None:
            return self._delta(index, json_object(fields.get("delta")))
        if kind == "content_block_start" and index is not None:
            return self._start(index, json_object(fields.get("content_block")))
        if kind == "content_block_stop" and index is not None:
            return self._stop(index)
        if kind == "message_start":
            message = json_object(fields.get("message"))
            self._response_id = json_str(message.get("id")) or None
            self._model = json_str(message.get("model")) or None
            usage = json_object(message.get("usage"))
            self._cached = json_int(usage.get("cache_read_input_tokens"))
            self._written = json_int(usage.get("cache_creation_input_tokens"))
            self._input = (
                (json_int(usage.get("input_tokens")) or 0)
                + (self._cached or 0)
                + (self._written or 0)
            )
        elif kind == "message_delta":
            stop_reason = json_str(json_object(fields.get("delta")).get("stop_reason"))
            self._stop_reason = stop_reason or self._stop_reason
            self._output = json_int(json_object(fields.get("usage")).get("output_tokens"))
        elif kind == "message_stop":
            self._stopped = True
        elif kind == "error":
            raise stream_error(fields, fallback_message=str(fields.get("error")))
        return []

    def _start(self, index: int, block: Mapping[str, object]) -> list[ModelEvent]:
        kind = json_str(block.get("type"))
        self._kinds[index] = kind
        if kind == "tool_use":
            return self._assembler.tool_call_start(
                index, json_str(block.get("id")), json_str(block.get("name"))
            )
        if kind == "thinking":
            thinking = json_str(block.get("thinking"))
            self._thinking[index] = [thinking]
            if signature := json_str(block.get("signature")):
                self._assembler.count_output(signature)
                self._signatures[index] = [signature]
            return self._assembler.reasoning(thinking)
        if kind == "redacted_thinking":
            data = json_str(block.get("data"))
            self._assembler.count_output(data)
            self._keep("redacted_thinking", {"data": data})
            return []
        if kind == "text":
            return self._assembler.text(json_str(block.get("text")))
        return []

    def _delta(self, index: int, delta: Mapping[str, object]) -> list[ModelEvent]:
        kind = delta.get("type")
        if kind == "text_delta":
            return self._assembler.text(json_str(delta.get("text")))
        if kind == "input_json_delta":
            return self._assembler.tool_call_arguments(index, json_str(delta.get("partial_json")))
        if kind == "thinking_delta":
            thinking = json_str(delta.get("thinking"))
            self._thinking.setdefault(index, []).append(thinking)
            return self._assembler.reasoning(thinking)
        if kind == "signature_delta":
            signature = json_str(delta.get("signature"))
            self._assembler.count_output(signature)
            self._signatures.setdefault(index, []).append(signature)
        return []

    def _stop(self, index: int) -> list[ModelEvent]:
        kind = self._kinds.get(index)
        if kind == "tool_use":
            return self._assembler.tool_call_end(index)
        if kind == "thinking" and index in self._signatures:
            payload: dict[str, JsonValue] = {
                "thinking": "".join(self._thinking.get(index, [])),
                "signature": "".join(self._signatures[index]),
            }
            self._keep("thinking", payload)
        return self._assembler.close_open_block()

    def _keep(self, kind: str, data: dict[str, JsonValue]) -> None:
        """Signed or redacted thinking, kept for this endpoint and model only."""
        if self._scope is not None:
            self._assembler.opaque(scoped_block(DRIVER, kind, self._scope, data))

    def finish(self) -> list[ModelEvent]:
        if not self._stopped:
            raise ModelError.network(STREAM_ENDED_EARLY)
        raw = self._stop_reason or "end_turn"
        output = self._output
        return self._assembler.complete(
            finish_reason=map_stop_reason(raw),
            raw_finish_reason=self._stop_reason,
            usage=TokenUsage(
                input_tokens=self._input,
                output_tokens=output,
                cached_input_tokens=self._cached,
                cache_write_tokens=self._written,
            ),
            response_id=self._response_id,
            model=self._model,
            provider_request_id=self.provider_request_id,
        )


def classify_anthropic_error(exc: BaseException) -> ModelError | None:
    """model-providers.md §3 for the ``anthropic`` SDK (and its ``httpx2`` transport)."""
    if isinstance(exc, anthropic.APIStatusError):
        return http_error(
            exc.status_code,
            exc.body,
            exc.response.headers,
            fallback_message=exc.message,
            url=str(exc.request.url),
        )
    if isinstance(exc, anthropic.APITimeoutError | httpx2.TimeoutException):
        return ModelError.timeout()
    if isinstance(exc, anthropic.APIConnectionError):
        return unreachable(str(exc.request.url), connection_cause(exc))
    if isinstance(exc, httpx2.HTTPError):
        return ModelError.network(f"stream interrupted ({type(exc).__name__})")
    if isinstance(exc, anthropic.APIResponseValidationError):
        return ModelError.protocol(exc.message)
    return None


class AnthropicAdapter:
    """``ModelPort`` over ``POST {base_url}/v1/messages`` (``base_url`` without ``/v1``).

    ``max_tokens`` comes from ``max_output_tokens`` (default 8,192, the API requires one);
    ``thinking`` enabled → a budget of half of it. Temperature and top_p only when set.
    """

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        self._client = anthropic.AsyncAnthropic(
            base_url=base_url,
            api_key=api_key or NO_API_KEY,
            default_headers=default_headers,
            http_client=anthropic.DefaultAsyncHttpxClient(
                verify=httpx2_tls(), mounts={"all://": httpx2_transport()}
            ),
        )
        self._configured = ConfiguredClients(
            lambda retries, timeout_s: self._client.with_options(
                max_retries=retries, timeout=timeout_s
            )
        )

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicAdapter(base_url={str(self._client.base_url)!r})"

    async def aclose(self) -> None:
        await self._client.close()

    def invoke(self, request: ModelRequest, options: ModelCallOptions) -> AsyncIterator[ModelEvent]:
        """Nothing happens until the first ``anext``: encoding errors (``invalid_request``,
        not_sent) surface there, like every other failure."""
        max_tokens = request.max_output_tokens or DEFAULT_MAX_TOKENS
        scope = OpaqueScope(endpoint=str(self._client.base_url), model=request.model)
        decoder = MessagesStreamDecoder(scope=scope)
        client = self._configured.get(options)
        sampling = {  # not in this SDK's signature; sent only when the request sets them
            name: value
            for name, value in (("temperature", request.temperature), ("top_p", request.top_p))
            if value is not None
        }

        async def open_stream() -> ChunkStream[object]:
            system, tools, messages = with_cache_breakpoints(  # invalid_request before any I/O
                encode_system(request.messages),
                encode_tools(request.tools),
                encode_messages(request.messages, scope),
            )
            thinking = encode_thinking(request.thinking, max_tokens)
            fields: dict[str, object] = {  # the SDK's key order, extra fields last
                "max_tokens": max_tokens,
                "messages": messages,
                "model": request.model,
                "stream": True,
            }
            if system:
                fields["system"] = system
            if thinking is not None:
                fields["thinking"] = thinking
            if tools:
                fields["tools"] = tools
            stream = await anthropic_stream(client, "/v1/messages", dump_body(fields | sampling))
            decoder.provider_request_id = request_id(stream.headers)
            return stream

        return guarded_events(open_stream, decoder, options, classify_anthropic_error)
