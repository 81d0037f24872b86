"""A request body serialized once, sent through the official SDKs' own request machinery.

The SDKs' typed ``create`` methods walk the whole request on every call (the openai SDK's
``async_maybe_transform`` visits every message and content part; both then re-encode it with
``json.dumps``): on a long session that costs hundreds of times one ``orjson.dumps`` of the same
request. Here the adapter's encoded request is dumped once with orjson and handed to the SDK's
lower-level ``post(path, content=bytes, stream=True, stream_cls=...)``, which sends the bytes
as they are and keeps everything else of the SDK: headers and authentication, retries with
backoff (the bytes are re-sent unchanged), status-error classes and the SSE stream decoding.

The bytes are what the SDK itself would have sent, modulo the JSON text form: compact
separators and UTF-8 (no ``\\u`` escapes), like the SDK's ``openapi_dumps``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import anthropic
import openai
import orjson

from openwork_core.models.port import ModelError

OpenAIStreamT = TypeVar("OpenAIStreamT", bound="openai.AsyncStream[Any]")
AnthropicStreamT = TypeVar("AnthropicStreamT", bound="anthropic.AsyncStream[Any]")


def dump_body(fields: Mapping[str, object]) -> bytes:
    """The request body as JSON bytes, one orjson pass. A value JSON cannot carry (a lone
    surrogate, a non-string key, NaN…) is ``invalid_request`` before anything is sent."""
    try:
        return orjson.dumps(fields)
    except (TypeError, orjson.JSONEncodeError) as exc:
        raise ModelError.invalid_request(f"the request is not valid JSON: {exc}") from exc


async def openai_stream(
    client: openai.AsyncOpenAI,
    path: str,
    body: bytes,
    *,
    cast_to: type[object],
    stream_cls: type[OpenAIStreamT],
) -> OpenAIStreamT:
    """``POST {base_url}{path}`` with ``body`` as it is, streaming into ``stream_cls``
    (``openai.AsyncStream[...]``); bearer authentication as the typed methods ask for it."""
    return await client.post(
        path,
        cast_to=cast_to,
        content=body,
        options={
            "headers": {"Content-Type": "application/json"},
            "security": {"bearer_auth": True},
        },
        stream=True,
        stream_cls=stream_cls,
    )


async def anthropic_stream(
    client: anthropic.AsyncAnthropic,
    path: str,
    body: bytes,
    *,
    cast_to: type[object],
    stream_cls: type[AnthropicStreamT],
) -> AnthropicStreamT:
    """``POST {base_url}{path}`` with ``body`` as it is, streaming into ``stream_cls``
    (``anthropic.AsyncStream[...]``)."""
    return await client.post(
        path,
        cast_to=cast_to,
        content=body,
        options={"headers": {"Content-Type": "application/json"}},
        stream=True,
        stream_cls=stream_cls,
    )
