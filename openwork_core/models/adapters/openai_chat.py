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

from openwork_core.models.adapters.error_body import httpx_transport
from openwork_core.models.adapters.openai_chat_encode import encode_messages, encode_tools
from openwork_core.models.adapters.raw_body import (
    ConfiguredClients,
    MessageFragments,
    add_openai_tail,
    dump_body,
)
from openwork_core.models.adapters.sse import SseStream
from openwork_core.models.adapters.streaming import (
    STREAM_ENDED_EARLY,
    ChunkStream,
    EventAssembler,
    guarded_events,
    json_array,
    json_int,
    json_object,
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
)
from openwork_core.storage.records import MaxTokensField, ReasoningEffort
from openwork_core.usage import TokenUsage

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


def map_usage(usage: Mapping[str, object]) -> TokenUsage:
    """The ``usage`` object of a chunk. Cached input from ``prompt_tokens_details.cached_tokens``
    (DeepSeek: ``prompt_cache_hit_tokens``), reasoning from
    ``completion_tokens_details.reasoning_tokens``."""
    cached = json_int(json_object(usage.get("prompt_tokens_details")).get("cached_tokens"))
    if cached is None:
        cached = json_int(usage.get("prompt_cache_hit_tokens"))
    return TokenUsage(
        input_tokens=json_int(usage.get("prompt_tokens")),
        output_tokens=json_int(usage.get("completion_tokens")),
        cached_input_tokens=cached,
        reasoning_tokens=json_int(
            json_object(usage.get("completion_tokens_details")).get("reasoning_tokens")
        ),
    )


IN_STREAM_ERROR = "An error occurred during streaming"
"""The message of an in-stream ``error`` object that has none (the SDK's wording)."""


async def openai_stream(client: openai.AsyncOpenAI, path: str, body: bytes) -> SseStream:
    """``POST {base_url}{path}`` with ``body`` as it is (the SDK's public ``post``: headers,
    bearer authentication, retries, status errors); the accepted stream's body is read by
    ``SseStream``. ``post`` wraps the response in an ``AsyncStream`` that is never iterated."""
    stream = await client.post(
        path,
        cast_to=object,
        content=body,
        options={"headers": {"Content-Type": "application/json"}},
        stream=True,
        stream_cls=openai.AsyncStream[object],
    )
    return SseStream(stream.response)


def raise_in_stream_error(fields: Mapping[str, object]) -> None:
    """An ``error`` object in an OpenAI stream's event (both protocols, as the SDK reads it)."""
    error = fields.get("error")
    if error:
        raise stream_error(error, fallback_message=IN_STREAM_ERROR)


class ChatStreamDecoder:
    """Decodes the chunks (JSON objects) of choice 0 into ``ModelEvent``s. Like the SDK's own
    lenient construction, a field of the wrong type counts as absent; a chunk with an ``error``
    object is the provider's in-stream error."""

    def __init__(self, provider_request_id: str | None = None) -> None:
        self.provider_request_id = provider_request_id
        self._assembler = EventAssembler()
        self._finish: str | None = None
        self._usage: TokenUsage | None = None
        self._response_id: str | None = None
        self._model: str | None = None

    def feed(self, chunk: object) -> list[ModelEvent]:
        fields = json_object(chunk)
        raise_in_stream_error(fields)
        if self._response_id is None and isinstance(response_id := fields.get("id"), str):
            self._response_id = response_id or None
        if self._model is None and isinstance(model := fields.get("model"), str):
            self._model = model or None
        usage = fields.get("usage")
        if isinstance(usage, dict):
            self._usage = map_usage(usage)
        events: list[ModelEvent] = []
        for raw_choice in json_array(fields.get("choices")):
            choice = json_object(raw_choice)
            if choice.get("index") not in (0, None):
                continue
            delta = json_object(choice.get("delta"))
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str):
                events += self._assembler.reasoning(reasoning)
            content = delta.get("content")
            if isinstance(content, str) and content:
                events += self._assembler.text(content)
            for position, raw_call in enumerate(json_array(delta.get("tool_calls"))):
                call = json_object(raw_call)
                index = json_int(call.get("index"))
                key = index if index is not None else position
                function = json_object(call.get("function"))
                if not self._assembler.has_tool_call(key):
                    name = function.get("name")
                    call_id = call.get("id")
                    if not isinstance(call_id, str) or not call_id:
                        call_id = f"call_{uuid.uuid4().hex[:24]}"
                    events += self._assembler.tool_call_start(
                        key, call_id, name if isinstance(name, str) else ""
                    )
                arguments = function.get("arguments")
                if isinstance(arguments, str) and arguments:
                    events += self._assembler.tool_call_arguments(key, arguments)
            finish = choice.get("finish_reason")
            if finish is not None:
                self._finish = str(finish)
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
            http_client=http_client
            or openai.DefaultAsyncHttpxClient(
                verify=httpx_tls(), mounts={"all://": httpx_transport()}
            ),
        )
        self._max_tokens_field: MaxTokensField = max_tokens_field
        self._configured = ConfiguredClients(
            lambda retries, timeout_s: self._client.with_options(
                max_retries=retries, timeout=httpx.Timeout(timeout_s)
            )
        )
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
        client = self._configured.get(options)
        limit = request.max_output_tokens
        effort = self._reasoning_effort

        async def open_stream() -> ChunkStream[object]:
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
            stream = await openai_stream(client, "/chat/completions", dump_body(fields))
            decoder.provider_request_id = request_id(stream.headers)
            return stream

        return guarded_events(open_stream, decoder, options, classify_openai_error)
