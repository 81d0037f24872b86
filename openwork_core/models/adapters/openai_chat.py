"""The OpenAI Chat Completions adapter (covers Ollama, vLLM, llama.cpp, LM Studio, DeepSeek…).

Always streaming, with ``stream_options={"include_usage": True}`` unless ``stream_usage`` is off
(model-providers.md §2). The
stream is decoded into ``ModelEvent``s: ``delta.content`` → text, ``delta.reasoning_content`` (or
``delta.reasoning``) → reasoning, ``delta.tool_calls`` by index → tool calls; ``finish_reason``
is the terminal event and the usage chunk that follows it is read before completing.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping

import httpx
import openai
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from openwork_core.models.adapters.openai_chat_encode import encode_messages, encode_tools
from openwork_core.models.adapters.raw_body import (
    MessageFragments,
    add_openai_tail,
    dump_body,
    openai_stream,
)
from openwork_core.models.adapters.streaming import (
    STREAM_ENDED_EARLY,
    ChunkStream,
    EventAssembler,
    guarded_events,
)
from openwork_core.models.adapters.tls import httpx_tls
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
    TokenUsage,
)
from openwork_core.storage.records import MaxTokensField, ReasoningEffort

_FINISH_REASONS: Mapping[str, FinishReason] = {
    "stop": FinishReason.STOP,
    "length": FinishReason.LENGTH,
    "tool_calls": FinishReason.TOOL_USE,
    "function_call": FinishReason.TOOL_USE,
    "content_filter": FinishReason.CONTENT_FILTER,
}

NO_API_KEY = "no-key"
"""Sent when the provider has no key (local servers), so the SDK never falls back to
``OPENAI_API_KEY`` from the daemon's environment."""


def map_finish_reason(raw: str) -> FinishReason:
    return _FINISH_REASONS.get(raw, FinishReason.UNKNOWN)


def _extra_int(extra: Mapping[str, object] | None, key: str) -> int | None:
    value = (extra or {}).get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def map_usage(usage: CompletionUsage) -> TokenUsage:
    """Cached input from ``prompt_tokens_details.cached_tokens`` (DeepSeek:
    ``prompt_cache_hit_tokens``), reasoning from ``completion_tokens_details.reasoning_tokens``."""
    prompt_details = usage.prompt_tokens_details
    completion_details = usage.completion_tokens_details
    cached = prompt_details.cached_tokens if prompt_details is not None else None
    if cached is None:
        cached = _extra_int(usage.model_extra, "prompt_cache_hit_tokens")
    return TokenUsage(
        input_tokens=usage.prompt_tokens,
        output_tokens=usage.completion_tokens,
        total_tokens=usage.total_tokens,
        cached_input_tokens=cached,
        reasoning_tokens=(
            completion_details.reasoning_tokens if completion_details is not None else None
        ),
    )


class ChatStreamDecoder:
    """Decodes ``ChatCompletionChunk``s of choice 0 into ``ModelEvent``s."""

    def __init__(self, provider_request_id: str | None = None) -> None:
        self.provider_request_id = provider_request_id
        self._assembler = EventAssembler()
        self._finish: str | None = None
        self._usage: TokenUsage | None = None
        self._response_id: str | None = None
        self._model: str | None = None

    def feed(self, chunk: ChatCompletionChunk) -> list[ModelEvent]:
        self._response_id = self._response_id or chunk.id or None
        self._model = self._model or chunk.model or None
        if chunk.usage is not None:
            self._usage = map_usage(chunk.usage)
        events: list[ModelEvent] = []
        for choice in chunk.choices:
            if choice.index not in (0, None):
                continue
            delta = choice.delta
            extra = delta.model_extra or {}
            reasoning = extra.get("reasoning_content") or extra.get("reasoning")
            if isinstance(reasoning, str):
                events += self._assembler.reasoning(reasoning)
            if delta.content:
                events += self._assembler.text(delta.content)
            for position, call in enumerate(delta.tool_calls or ()):
                key = call.index if isinstance(call.index, int) else position
                function = call.function
                if not self._assembler.has_tool_call(key):
                    name = function.name if function is not None else None
                    call_id = call.id or f"call_{uuid.uuid4().hex[:24]}"
                    events += self._assembler.tool_call_start(key, call_id, name or "")
                if function is not None and function.arguments:
                    events += self._assembler.tool_call_arguments(key, function.arguments)
            if choice.finish_reason is not None:
                self._finish = str(choice.finish_reason)
                events += self._assembler.close_open_block()
        return events

    def finish(self) -> list[ModelEvent]:
        if self._finish is None:
            raise ModelError.network(STREAM_ENDED_EARLY)
        return self._assembler.complete(
            finish_reason=map_finish_reason(self._finish),
            raw_finish_reason=self._finish,
            usage=self._usage,
            response_id=self._response_id,
            model=self._model,
            provider_request_id=self.provider_request_id,
        )


def classify_openai_error(exc: BaseException) -> ModelError | None:
    """model-providers.md §3 for the ``openai`` SDK's exceptions."""
    if isinstance(exc, openai.APIStatusError):
        return http_error(
            exc.status_code,
            exc.body,
            exc.response.headers,
            fallback_message=exc.message,
            url=str(exc.request.url),
        )
    if isinstance(exc, openai.APITimeoutError):
        return ModelError.timeout()
    if isinstance(exc, openai.APIConnectionError):
        return unreachable(str(exc.request.url), connection_cause(exc))
    if isinstance(exc, openai.APIResponseValidationError):
        return ModelError.protocol(exc.message)
    if isinstance(exc, openai.APIError):  # an ``error`` object inside the stream
        return stream_error(exc.body, fallback_message=exc.message)
    return None


class OpenAIChatAdapter:
    """``ModelPort`` over ``POST {base_url}/chat/completions`` with the official SDK.

    ``max_tokens_field`` names the request field that carries ``max_output_tokens``:
    ``max_tokens`` (default; understood by every OpenAI-compatible server),
    ``max_completion_tokens`` (OpenAI's reasoning models require it) or ``none`` (no token limit
    is sent). ``stream_usage=False`` (was ``include_usage``) drops ``stream_options`` for
    servers that reject it. ``reasoning_effort`` (None: not sent) is sent as ``reasoning_effort``;
    ``prompt_cache_key`` is the session id. Temperature and top_p are sent only when the request
    sets them. Connection-level retries are the SDK's, before any output.
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        max_tokens_field: MaxTokensField = "max_tokens",
        stream_usage: bool = True,
        reasoning_effort: ReasoningEffort | None = None,
        default_headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or NO_API_KEY,
            default_headers=default_headers,
            http_client=http_client or openai.DefaultAsyncHttpxClient(verify=httpx_tls()),
        )
        self._max_tokens_field: MaxTokensField = max_tokens_field
        self._messages = MessageFragments(encode_messages)
        self._stream_usage = stream_usage
        self._reasoning_effort: ReasoningEffort | None = reasoning_effort

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIChatAdapter(base_url={str(self._client.base_url)!r})"

    async def aclose(self) -> None:
        await self._client.close()

    def invoke(self, request: ModelRequest, options: ModelCallOptions) -> AsyncIterator[ModelEvent]:
        """Nothing happens until the first ``anext``: encoding errors (``invalid_request``,
        not_sent) surface there, like every other failure."""
        decoder = ChatStreamDecoder()
        client = self._client.with_options(
            max_retries=max(0, options.max_transport_attempts - 1),
            timeout=httpx.Timeout(options.idle_timeout_s),
        )
        limit = request.max_output_tokens
        effort = self._reasoning_effort

        async def open_stream() -> ChunkStream[ChatCompletionChunk]:
            messages = self._messages.array(request.messages)  # invalid_request before any I/O
            tools = encode_tools(request.tools)
            fields: dict[str, object] = {"messages": messages, "model": request.model}
            # the SDK's key order (alphabetical after these two), so the bytes are the ones it
            # would send
            if limit is not None and self._max_tokens_field != "none":
                fields[self._max_tokens_field] = limit
            if options.session_id is not None:
                fields["prompt_cache_key"] = options.session_id
            if effort is not None:
                fields["reasoning_effort"] = effort
            fields["stream"] = True
            if self._stream_usage:
                fields["stream_options"] = {"include_usage": True}
            add_openai_tail(
                fields, temperature=request.temperature, tools=tools, top_p=request.top_p
            )
            stream = await openai_stream(
                client,
                "/chat/completions",
                dump_body(fields),
                cast_to=ChatCompletion,
                stream_cls=openai.AsyncStream[ChatCompletionChunk],
            )
            decoder.provider_request_id = request_id(stream.response.headers)
            return stream

        return guarded_events(open_stream, decoder, options, classify_openai_error)
