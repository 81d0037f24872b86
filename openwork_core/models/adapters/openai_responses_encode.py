"""ModelRequest → OpenAI Responses ``input`` items and tools (model-providers.md §1, §5), pure.

- system messages → input messages of role ``system`` (kept as separate parts, in order);
- user text/data → ``input_text``, ``input_image`` (URL, ``data:`` URL or ``file_id``),
  ``input_file`` (base64 ``file_data`` or ``file_id``);
- assistant: encrypted reasoning (provider-opaque blocks of driver ``openai-responses``, kind
  ``reasoning``, made by this endpoint for this model; see ``opaque``) first, as ``reasoning``
  items, then the text as an assistant input message, then ``function_call`` items; plain thinking
  blocks and every other opaque block are dropped;
- no item carries an ``id``: with ``store: false`` the server keeps nothing it could look one up
  in (a reasoning item travels by its ``encrypted_content``); a reasoning block without encrypted
  content is never sent, nor is the reasoning of an assistant message without text or tool call
  (the API wants each reasoning item followed by the output it led to);
- each tool result → a ``function_call_output`` item with its text;
- tools → ``{"type":"function","name","description","parameters","strict": false}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never, cast

from openai.types.responses import (
    EasyInputMessageParam,
    FunctionToolParam,
    ResponseInputContentParam,
    ResponseInputItemParam,
    ResponseReasoningItemParam,
)
from pydantic import JsonValue

from openwork_chat_state.messages import (
    Base64Source,
    DataBlock,
    FileIdSource,
    Message,
    ProviderOpaqueBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolDefinition,
    ToolResultBlock,
    UrlSource,
)
from openwork_core.models.adapters.opaque import OpaqueScope, replayable
from openwork_core.models.adapters.openai_chat_encode import (
    EMPTY_PARAMETERS_SCHEMA,
    tool_result_text,
)
from openwork_core.models.port import ModelError

DRIVER = "openai-responses"
"""``ProviderOpaqueBlock.driver`` of the reasoning items this adapter keeps and sends back."""

REASONING_KIND = "reasoning"


def _data(block: DataBlock) -> ResponseInputContentParam:
    source = block.source
    if isinstance(source, FileIdSource):
        return {"type": "input_file", "file_id": source.id}
    image = source.media_type.startswith("image/")
    if isinstance(source, UrlSource):
        if not image:
            raise ModelError.invalid_request(
                f"the Responses adapter sends URLs for images only, not {source.media_type}"
            )
        return {"type": "input_image", "image_url": source.url, "detail": "auto"}
    assert isinstance(source, Base64Source)
    data_url = f"data:{source.media_type};base64,{source.data}"
    if image:
        return {"type": "input_image", "image_url": data_url, "detail": "auto"}
    return {"type": "input_file", "file_data": data_url, "filename": block.name or "file"}


def _user(message: Message) -> EasyInputMessageParam:
    parts: list[ResponseInputContentParam] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append({"type": "input_text", "text": block.text})
        elif isinstance(block, DataBlock):
            parts.append(_data(block))
        elif not isinstance(block, ThinkingBlock | ProviderOpaqueBlock):
            raise ModelError.invalid_request(f"a user message holds a {block.type} block")
    return {"type": "message", "role": "user", "content": parts}


def reasoning_data(summary: list[str], encrypted_content: str) -> dict[str, JsonValue]:
    """What a reasoning block stores: the summary texts and the encrypted content (no id)."""
    texts: list[JsonValue] = list(summary)
    return {"summary": texts, "encrypted_content": encrypted_content}


def _reasoning(
    block: ProviderOpaqueBlock, scope: OpaqueScope | None
) -> ResponseInputItemParam | None:
    payload = replayable(block, DRIVER, scope)
    if payload is None or block.kind != REASONING_KIND:
        return None
    encrypted, summary = payload.get("encrypted_content"), payload.get("summary")
    if not isinstance(encrypted, str) or not encrypted or not isinstance(summary, list):
        return None
    item = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": t} for t in summary if isinstance(t, str)],
        "encrypted_content": encrypted,
    }
    return cast(ResponseReasoningItemParam, item)  # the SDK type insists on an id; see above


def _assistant(message: Message, scope: OpaqueScope | None) -> list[ResponseInputItemParam]:
    reasoning: list[ResponseInputItemParam] = []
    items: list[ResponseInputItemParam] = []
    if message.text:
        items.append({"type": "message", "role": "assistant", "content": message.text})
    for block in message.content:
        if isinstance(block, ProviderOpaqueBlock):
            kept = _reasoning(block, scope)
            if kept is not None:
                reasoning.append(kept)
        elif isinstance(block, ToolCallBlock):
            items.append(
                {
                    "type": "function_call",
                    "call_id": block.id,
                    "name": block.name,
                    "arguments": block.input or "{}",
                }
            )
        elif not isinstance(block, TextBlock | ThinkingBlock):
            raise ModelError.invalid_request(f"an assistant message holds a {block.type} block")
    # a reasoning item must be followed by the output it led to: alone, the API refuses it
    return reasoning + items if items else []


def _tool_results(message: Message) -> list[ResponseInputItemParam]:
    items: list[ResponseInputItemParam] = []
    for block in message.content:
        if not isinstance(block, ToolResultBlock):
            raise ModelError.invalid_request(f"a tool message holds a {block.type} block")
        items.append(
            {"type": "function_call_output", "call_id": block.id, "output": tool_result_text(block)}
        )
    return items


def encode_input(
    messages: Sequence[Message], scope: OpaqueScope | None = None, *, reasoning: bool = True
) -> list[ResponseInputItemParam]:
    """``scope`` is the endpoint and model of this request: reasoning made there goes back
    (``reasoning=False`` drops it all, the resubmission after ``invalid_encrypted_content``)."""
    replay = scope if reasoning else None
    items: list[ResponseInputItemParam] = []
    for message in messages:
        match message.role:
            case Role.SYSTEM:
                items.append({"type": "message", "role": "system", "content": message.text})
            case Role.USER:
                items.append(_user(message))
            case Role.ASSISTANT:
                items.extend(_assistant(message, replay))
            case Role.TOOL:
                items.extend(_tool_results(message))
            case _:
                assert_never(message.role)
    return items


def encode_tools(tools: Sequence[ToolDefinition]) -> list[FunctionToolParam]:
    return [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": dict(tool.parameters) if tool.parameters else EMPTY_PARAMETERS_SCHEMA,
            "strict": False,
        }
        for tool in tools
    ]
