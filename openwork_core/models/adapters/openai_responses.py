"""The OpenAI Responses adapter (``POST {base_url}/responses``, SSE) on the official SDK.

Events: ``response.output_text.delta`` → text; ``response.reasoning_summary_text.delta`` and
``response.reasoning_text.delta`` → reasoning; a ``function_call`` output item plus
``response.function_call_arguments.delta`` → a tool call. Terminal events:
``response.completed``, ``response.incomplete`` (finish length / content_filter / incomplete) and
``response.failed`` / ``error`` (classified by code, phase stream_decode; model-providers.md §3).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping

import httpx
import openai
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseErrorEvent,
    ResponseFailedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseFunctionToolCall,
    ResponseIncompleteEvent,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseReasoningSummaryTextDeltaEvent,
    ResponseReasoningTextDeltaEvent,
    ResponseStreamEvent,
    ResponseTextDeltaEvent,
)

from openwork_core.models.adapters.openai_chat import NO_API_KEY, classify_openai_error
from openwork_core.models.adapters.openai_responses_encode import encode_input, encode_tools
from openwork_core.models.adapters.raw_body import MessageFragments, dump_body, openai_stream
from openwork_core.models.adapters.streaming import (
    STREAM_ENDED_EARLY,
    ChunkStream,
    EventAssembler,
    guarded_events,
)
from openwork_core.models.errors import request_id, stream_error
from openwork_core.models.port import (
    FinishReason,
    ModelCallOptions,
    ModelError,
    ModelEvent,
    ModelRequest,
    TokenUsage,
)

_INCOMPLETE_REASONS: Mapping[str, FinishReason] = {
    "max_output_tokens": FinishReason.LENGTH,
    "content_filter": FinishReason.CONTENT_FILTER,
}


def map_usage(response: Response) -> TokenUsage | None:
    usage = response.usage
    if usage is None:
        return None
    return TokenUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
        cached_input_tokens=usage.input_tokens_details.cached_tokens,
        reasoning_tokens=usage.output_tokens_details.reasoning_tokens,
    )


class ResponsesStreamDecoder:
    """Decodes ``ResponseStreamEvent``s into ``ModelEvent``s (tool calls keyed by output index)."""

    def __init__(self, provider_request_id: str | None = None) -> None:
        self.provider_request_id = provider_request_id
        self._assembler = EventAssembler()
        self._argument_deltas: set[int] = set()
        self._terminal: list[ModelEvent] | None = None

    def feed(self, event: ResponseStreamEvent) -> list[ModelEvent]:
        if self._terminal is not None:
            return []
        if isinstance(event, ResponseTextDeltaEvent):
            return self._assembler.text(event.delta)
        if isinstance(
            event, ResponseReasoningSummaryTextDeltaEvent | ResponseReasoningTextDeltaEvent
        ):
            return self._assembler.reasoning(event.delta)
        if isinstance(event, ResponseOutputItemAddedEvent):
            item = event.item
            if isinstance(item, ResponseFunctionToolCall):
                events = self._assembler.tool_call_start(
                    event.output_index, item.call_id, item.name
                )
                if item.arguments:
                    self._argument_deltas.add(event.output_index)
                    events += self._assembler.tool_call_arguments(
                        event.output_index, item.arguments
                    )
                return events
            return self._assembler.close_open_block()
        if isinstance(event, ResponseFunctionCallArgumentsDeltaEvent):
            self._argument_deltas.add(event.output_index)
            return self._assembler.tool_call_arguments(event.output_index, event.delta)
        if isinstance(event, ResponseFunctionCallArgumentsDoneEvent):
            if event.output_index in self._argument_deltas:
                return []
            self._argument_deltas.add(event.output_index)
            return self._assembler.tool_call_arguments(event.output_index, event.arguments)
        if isinstance(event, ResponseOutputItemDoneEvent):
            if self._assembler.has_tool_call(event.output_index):
                return self._assembler.tool_call_end(event.output_index)
            return self._assembler.close_open_block()
        if isinstance(event, ResponseCompletedEvent | ResponseIncompleteEvent):
            self._terminal = self._complete(event.response)
            return []
        if isinstance(event, ResponseFailedEvent):
            error = event.response.error
            body = {"response": {"error": error.model_dump() if error is not None else {}}}
            raise stream_error(body, fallback_message="response.failed")
        if isinstance(event, ResponseErrorEvent):
            raise stream_error({"code": event.code, "message": event.message})
        return []

    def _complete(self, response: Response) -> list[ModelEvent]:
        raw: str | None = response.status or None
        finish = FinishReason.STOP
        if response.status == "incomplete":
            details = response.incomplete_details
            raw = details.reason if details is not None and details.reason else "incomplete"
            finish = _INCOMPLETE_REASONS.get(raw, FinishReason.INCOMPLETE)
        return self._assembler.complete(
            finish_reason=finish,
            raw_finish_reason=raw,
            usage=map_usage(response),
            response_id=response.id,
            model=str(response.model),
            provider_request_id=self.provider_request_id,
        )

    def finish(self) -> list[ModelEvent]:
        if self._terminal is None:
            raise ModelError.network(STREAM_ENDED_EARLY)
        return self._terminal


class OpenAIResponsesAdapter:
    """``ModelPort`` over the Responses API. ``max_output_tokens`` is sent as is; temperature and
    top_p only when set; requests are not stored (``store: false``)."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        default_headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or NO_API_KEY,
            default_headers=default_headers,
            http_client=http_client,
        )
        self._input = MessageFragments(encode_input)

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIResponsesAdapter(base_url={str(self._client.base_url)!r})"

    async def aclose(self) -> None:
        await self._client.close()

    def invoke(self, request: ModelRequest, options: ModelCallOptions) -> AsyncIterator[ModelEvent]:
        """Nothing happens until the first ``anext``: encoding errors (``invalid_request``,
        not_sent) surface there, like every other failure."""
        decoder = ResponsesStreamDecoder()
        client = self._client.with_options(
            max_retries=max(0, options.max_transport_attempts - 1),
            timeout=httpx.Timeout(options.idle_timeout_s),
        )

        async def open_stream() -> ChunkStream[ResponseStreamEvent]:
            items = self._input.array(request.messages)  # invalid_request before any I/O
            tools = encode_tools(request.tools)
            fields: dict[str, object] = {"input": items}  # the SDK's key order
            if request.max_output_tokens is not None:
                fields["max_output_tokens"] = request.max_output_tokens
            fields["model"] = request.model
            fields["store"] = False
            fields["stream"] = True
            if request.temperature is not None:
                fields["temperature"] = request.temperature
            if tools:
                fields["tools"] = tools
            if request.top_p is not None:
                fields["top_p"] = request.top_p
            stream = await openai_stream(
                client,
                "/responses",
                dump_body(fields),
                cast_to=Response,
                stream_cls=openai.AsyncStream[ResponseStreamEvent],
            )
            decoder.provider_request_id = request_id(stream.response.headers)
            return stream

        return guarded_events(open_stream, decoder, options, classify_openai_error)
