"""The OpenAI Responses adapter (``POST {base_url}/responses``, SSE) on the official SDK.

Events: ``response.output_text.delta`` → text; ``response.reasoning_summary_text.delta`` and
``response.reasoning_text.delta`` → reasoning; a ``function_call`` output item plus
``response.function_call_arguments.delta`` → a tool call. Terminal events:
``response.completed``, ``response.incomplete`` (finish length / content_filter / incomplete) and
``response.failed`` / ``error`` (classified by code, phase stream_decode; model-providers.md §3).

Stateless (issue 14 points 3, 10): requests are not stored (``store: false``) and ask for
``include: ["reasoning.encrypted_content"]``; each finished ``reasoning`` output item with encrypted
content becomes a provider-opaque block (driver ``openai-responses``, scoped to this endpoint and
the requested model) that goes back in later requests of that endpoint and model only. A request
the server refuses with ``invalid_encrypted_content`` before any output is resubmitted once without
reasoning items. ``prompt_cache_key`` is the session id; ``reasoning.effort`` is sent only when
configured.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from functools import partial

import httpx
import openai
import orjson
import structlog
from openai.types.responses import ResponseInputItemParam

from openwork_core.models.adapters.error_body import httpx_transport
from openwork_core.models.adapters.opaque import OpaqueScope, scoped_block
from openwork_core.models.adapters.openai_chat import (
    NO_API_KEY,
    classify_openai_error,
    openai_stream,
    raise_in_stream_error,
)
from openwork_core.models.adapters.openai_responses_encode import (
    DRIVER,
    REASONING_KIND,
    encode_input,
    encode_tools,
    reasoning_data,
)
from openwork_core.models.adapters.raw_body import (
    ConfiguredClients,
    MessageFragments,
    add_openai_tail,
    dump_body,
)
from openwork_core.models.adapters.streaming import (
    STREAM_ENDED_EARLY,
    ChunkStream,
    EventAssembler,
    guarded_events,
    json_array,
    json_int,
    json_object,
    json_str,
)
from openwork_core.models.adapters.tls import httpx_tls
from openwork_core.models.errors import provider_error_codes, request_id, stream_error
from openwork_core.models.port import (
    FinishReason,
    ModelCallOptions,
    ModelError,
    ModelEvent,
    ModelRequest,
)
from openwork_core.storage.records import ReasoningEffort
from openwork_core.usage import TokenUsage

log = structlog.get_logger(__name__)

INVALID_ENCRYPTED_CONTENT = "invalid_encrypted_content"
"""The provider code of a request whose reasoning items the server cannot decrypt."""

_INCOMPLETE_REASONS: Mapping[str, FinishReason] = {
    "max_output_tokens": FinishReason.LENGTH,
    "content_filter": FinishReason.CONTENT_FILTER,
}


def map_usage(response: Mapping[str, object]) -> TokenUsage | None:
    if not isinstance(usage := response.get("usage"), dict):
        return None
    fields = json_object(usage)
    return TokenUsage(
        input_tokens=json_int(fields.get("input_tokens")),
        output_tokens=json_int(fields.get("output_tokens")),
        cached_input_tokens=json_int(
            json_object(fields.get("input_tokens_details")).get("cached_tokens")
        ),
        reasoning_tokens=json_int(
            json_object(fields.get("output_tokens_details")).get("reasoning_tokens")
        ),
    )


_TEXT = "response.output_text.delta"
_REASONING = ("response.reasoning_summary_text.delta", "response.reasoning_text.delta")
_ITEM_ADDED = "response.output_item.added"
_ITEM_DONE = "response.output_item.done"
_ARGUMENTS_DELTA = "response.function_call_arguments.delta"
_ARGUMENTS_DONE = "response.function_call_arguments.done"
_TERMINAL = ("response.completed", "response.incomplete")


class ResponsesStreamDecoder:
    """Decodes the stream's events (JSON objects, by ``type``) into ``ModelEvent``s; tool calls
    keyed by output index. Like the SDK's lenient construction, a field of the wrong type counts
    as absent, and an event of another type is ignored."""

    def __init__(
        self, provider_request_id: str | None = None, scope: OpaqueScope | None = None
    ) -> None:
        self.provider_request_id = provider_request_id
        self._scope = scope
        self._assembler = EventAssembler()
        self._argument_deltas: set[int] = set()
        self._terminal: list[ModelEvent] | None = None

    def feed(self, event: object) -> list[ModelEvent]:
        if self._terminal is not None:
            return []
        fields = json_object(event)
        raise_in_stream_error(fields)
        kind = fields.get("type")
        if kind == _TEXT:
            return self._assembler.text(json_str(fields.get("delta")))
        if kind in _REASONING:
            return self._assembler.reasoning(json_str(fields.get("delta")))
        index = json_int(fields.get("output_index"))
        if kind == _ITEM_ADDED:
            item = json_object(fields.get("item"))
            if item.get("type") == "function_call" and index is not None:
                events = self._assembler.tool_call_start(
                    index, json_str(item.get("call_id")), json_str(item.get("name"))
                )
                if arguments := json_str(item.get("arguments")):
                    self._argument_deltas.add(index)
                    events += self._assembler.tool_call_arguments(index, arguments)
                return events
            return self._assembler.close_open_block()
        if kind == _ARGUMENTS_DELTA and index is not None:
            self._argument_deltas.add(index)
            return self._assembler.tool_call_arguments(index, json_str(fields.get("delta")))
        if kind == _ARGUMENTS_DONE and index is not None:
            if index in self._argument_deltas:
                return []
            self._argument_deltas.add(index)
            return self._assembler.tool_call_arguments(index, json_str(fields.get("arguments")))
        if kind == _ITEM_DONE:
            if index is not None and self._assembler.has_tool_call(index):
                return self._assembler.tool_call_end(index)
            item = json_object(fields.get("item"))
            if item.get("type") == "reasoning":
                self._keep_reasoning(item)
            return self._assembler.close_open_block()
        if kind in _TERMINAL:
            self._terminal = self._complete(json_object(fields.get("response")))
            return []
        if kind == "response.failed":
            error = json_object(fields.get("response")).get("error")
            body = {"response": {"error": error if isinstance(error, dict) else {}}}
            raise stream_error(body, fallback_message="response.failed")
        if kind == "error":
            raise stream_error({"code": fields.get("code"), "message": fields.get("message")})
        return []

    def _keep_reasoning(self, item: Mapping[str, object]) -> None:
        encrypted = json_str(item.get("encrypted_content"))
        if self._scope is None or not encrypted:
            return
        summary = [json_str(json_object(s).get("text")) for s in json_array(item.get("summary"))]
        for text in (encrypted, *summary):
            self._assembler.count_output(text)
        data = reasoning_data(summary, encrypted)
        self._assembler.opaque(scoped_block(DRIVER, REASONING_KIND, self._scope, data))

    def _complete(self, response: Mapping[str, object]) -> list[ModelEvent]:
        status = json_str(response.get("status"))
        raw: str | None = status or None
        finish = FinishReason.STOP
        if status == "incomplete":
            raw = json_str(json_object(response.get("incomplete_details")).get("reason"))
            raw = raw or "incomplete"
            finish = _INCOMPLETE_REASONS.get(raw, FinishReason.INCOMPLETE)
        return self._assembler.complete(
            finish_reason=finish,
            raw_finish_reason=raw,
            usage=map_usage(response),
            response_id=json_str(response.get("id")) or None,
            model=json_str(response.get("model")) or None,
            provider_request_id=self.provider_request_id,
        )

    def finish(self) -> list[ModelEvent]:
        if self._terminal is None:
            raise ModelError.network(STREAM_ENDED_EARLY)
        return self._terminal


def has_reasoning(items: list[ResponseInputItemParam]) -> bool:
    return any(item.get("type") == "reasoning" for item in items)


def rejected_reasoning(exc: openai.APIStatusError) -> bool:
    """The server could not decrypt the reasoning items we sent (issue 14 point 10)."""
    return exc.status_code == 400 and INVALID_ENCRYPTED_CONTENT in provider_error_codes(exc.body)


class OpenAIResponsesAdapter:
    """``ModelPort`` over the Responses API. ``max_output_tokens`` is sent as is; temperature and
    top_p only when set; ``reasoning_effort`` (None: not sent) becomes ``reasoning.effort``;
    requests are not stored (``store: false``)."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        reasoning_effort: ReasoningEffort | None = None,
        default_headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._reasoning_effort: ReasoningEffort | None = reasoning_effort
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or NO_API_KEY,
            default_headers=default_headers,
            http_client=http_client
            or openai.DefaultAsyncHttpxClient(
                verify=httpx_tls(), mounts={"all://": httpx_transport()}
            ),
        )
        self._configured = ConfiguredClients(
            lambda retries, timeout_s: self._client.with_options(
                max_retries=retries, timeout=httpx.Timeout(timeout_s)
            )
        )
        self._inputs: dict[str, MessageFragments] = {}
        """Per requested model: the reasoning it made goes back to it only."""

    def _input(self, scope: OpaqueScope) -> MessageFragments:
        fragments = self._inputs.get(scope.model)
        if fragments is None:
            fragments = MessageFragments(partial(encode_input, scope=scope))
            self._inputs[scope.model] = fragments
        return fragments

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIResponsesAdapter(base_url={str(self._client.base_url)!r})"

    async def aclose(self) -> None:
        await self._client.close()

    def invoke(self, request: ModelRequest, options: ModelCallOptions) -> AsyncIterator[ModelEvent]:
        """Nothing happens until the first ``anext``: encoding errors (``invalid_request``,
        not_sent) surface there, like every other failure."""
        scope = OpaqueScope(endpoint=str(self._client.base_url), model=request.model)
        decoder = ResponsesStreamDecoder(scope=scope)
        client = self._configured.get(options)
        effort = self._reasoning_effort
        tools = encode_tools(request.tools)

        async def create(
            items: orjson.Fragment | list[ResponseInputItemParam],
        ) -> ChunkStream[object]:
            fields: dict[str, object] = {  # the SDK's key order (alphabetical)
                "include": ["reasoning.encrypted_content"],
                "input": items,
            }
            if request.max_output_tokens is not None:
                fields["max_output_tokens"] = request.max_output_tokens
            fields["model"] = request.model
            if options.session_id is not None:
                fields["prompt_cache_key"] = options.session_id
            if effort is not None:
                fields["reasoning"] = {"effort": effort}
            fields["store"] = False
            fields["stream"] = True
            add_openai_tail(
                fields, temperature=request.temperature, tools=tools, top_p=request.top_p
            )
            stream = await openai_stream(client, "/responses", dump_body(fields))
            decoder.provider_request_id = request_id(stream.headers)
            return stream

        async def open_stream() -> ChunkStream[object]:
            items = self._input(scope).array(request.messages)  # invalid_request before any I/O
            try:
                return await create(items)
            except openai.APIStatusError as exc:
                # the full encoding only on this rare path: did we send any reasoning at all?
                if not rejected_reasoning(exc) or not has_reasoning(
                    encode_input(request.messages, scope)
                ):
                    raise
            log.warning("model.reasoning_rejected", model=request.model)
            # the rare resubmission is encoded whole, not cached beside the fragments
            return await create(encode_input(request.messages, scope, reasoning=False))

        return guarded_events(open_stream, decoder, options, classify_openai_error)
