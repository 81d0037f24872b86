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
from anthropic import types as wire
from anthropic.types import (
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawContentBlockStopEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
    RawMessageStreamEvent,
)
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
from openwork_core.models.adapters.opaque import OpaqueScope, scoped_block
from openwork_core.models.adapters.raw_body import (
    ConfiguredClients,
    anthropic_stream,
    dump_body,
)
from openwork_core.models.adapters.streaming import (
    STREAM_ENDED_EARLY,
    ChunkStream,
    EventAssembler,
    guarded_events,
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


class MessagesStreamDecoder:
    """Decodes ``RawMessageStreamEvent``s into ``ModelEvent``s."""

    def __init__(
        self, provider_request_id: str | None = None, scope: OpaqueScope | None = None
    ) -> None:
        self.provider_request_id = provider_request_id
        self._scope = scope
        self._assembler = EventAssembler()
        self._kinds: dict[int, str] = {}
        self._thinking: dict[int, list[str]] = {}
        self._signatures: dict[int, str] = {}
        self._stop_reason: str | None = None
        self._stopped = False
        self._response_id: str | None = None
        self._model: str | None = None
        self._input = 0
        self._cached: int | None = None
        self._written: int | None = None
        self._output: int | None = None

    def feed(self, event: RawMessageStreamEvent) -> list[ModelEvent]:
        if isinstance(event, RawMessageStartEvent):
            message = event.message
            self._response_id, self._model = message.id, message.model
            usage = message.usage
            self._cached = usage.cache_read_input_tokens
            self._written = usage.cache_creation_input_tokens
            self._input = (
                usage.input_tokens
                + (usage.cache_read_input_tokens or 0)
                + (usage.cache_creation_input_tokens or 0)
            )
            return []
        if isinstance(event, RawContentBlockStartEvent):
            return self._start(event)
        if isinstance(event, RawContentBlockDeltaEvent):
            return self._delta(event)
        if isinstance(event, RawContentBlockStopEvent):
            return self._stop(event.index)
        if isinstance(event, RawMessageDeltaEvent):
            self._stop_reason = event.delta.stop_reason or self._stop_reason
            self._output = event.usage.output_tokens
            return []
        if isinstance(event, RawMessageStopEvent):
            self._stopped = True
        return []

    def _start(self, event: RawContentBlockStartEvent) -> list[ModelEvent]:
        block, index = event.content_block, event.index
        self._kinds[index] = block.type
        if isinstance(block, wire.ToolUseBlock):
            return self._assembler.tool_call_start(index, block.id, block.name)
        if isinstance(block, wire.ThinkingBlock):
            self._thinking[index] = [block.thinking]
            if block.signature:
                self._signatures[index] = block.signature
            return self._assembler.reasoning(block.thinking)
        if isinstance(block, wire.RedactedThinkingBlock):
            self._keep("redacted_thinking", {"data": block.data})
            return []
        if isinstance(block, wire.TextBlock):
            return self._assembler.text(block.text)
        return []

    def _delta(self, event: RawContentBlockDeltaEvent) -> list[ModelEvent]:
        delta, index = event.delta, event.index
        if delta.type == "text_delta":
            return self._assembler.text(delta.text)
        if delta.type == "thinking_delta":
            self._thinking.setdefault(index, []).append(delta.thinking)
            return self._assembler.reasoning(delta.thinking)
        if delta.type == "signature_delta":
            self._signatures[index] = self._signatures.get(index, "") + delta.signature
            return []
        if delta.type == "input_json_delta":
            return self._assembler.tool_call_arguments(index, delta.partial_json)
        return []

    def _stop(self, index: int) -> list[ModelEvent]:
        kind = self._kinds.get(index)
        if kind == "tool_use":
            return self._assembler.tool_call_end(index)
        if kind == "thinking" and index in self._signatures:
            payload: dict[str, JsonValue] = {
                "thinking": "".join(self._thinking.get(index, [])),
                "signature": self._signatures[index],
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
                total_tokens=self._input + output if output is not None else None,
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
        if exc.status_code < 400:  # an ``error`` event inside an accepted stream
            return stream_error(exc.body, fallback_message=exc.message)
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
    if isinstance(exc, anthropic.APIError):
        return stream_error(exc.body, fallback_message=exc.message)
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
            http_client=anthropic.DefaultAsyncHttpxClient(verify=httpx2_tls()),
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

        async def open_stream() -> ChunkStream[RawMessageStreamEvent]:
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
            stream = await anthropic_stream(
                client,
                "/v1/messages",
                dump_body(fields | sampling),
                cast_to=wire.Message,
                stream_cls=anthropic.AsyncStream[RawMessageStreamEvent],
            )
            decoder.provider_request_id = request_id(stream.response.headers)
            return stream

        return guarded_events(open_stream, decoder, options, classify_anthropic_error)
