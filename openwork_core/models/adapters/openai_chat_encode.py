"""ModelRequest → OpenAI Chat Completions messages and tools (model-providers.md §1), pure.

- system messages → role ``system`` with their text;
- user text → a string (text only) or content parts (text, ``image_url`` for images as URL or
  ``data:`` URL, ``file`` with ``file_data`` for other base64 data); ``file_id`` sources are not
  supported here → ``invalid_request``;
- assistant text + ``tool_calls`` (``{"id","type":"function","function":{"name","arguments"}}``);
  thinking blocks and provider-opaque blocks are dropped (Chat Completions has no slot for them);
- each tool result → one role ``tool`` message with ``tool_call_id`` and text content (data
  outputs become a one-line note: tool messages carry text only);
- tools → ``{"type":"function","function":{"name","description","parameters"}}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionContentPartParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.shared_params import FunctionDefinition

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
from openwork_core.models.port import ModelError

EMPTY_PARAMETERS_SCHEMA: dict[str, object] = {"type": "object", "properties": {}}
"""Sent for a tool whose definition has no parameters schema."""


def data_note(block: DataBlock) -> str:
    """The text that stands for a data output inside a text-only tool message."""
    media = "file" if isinstance(block.source, FileIdSource) else block.source.media_type
    label = f" {block.name}" if block.name else ""
    return f"[{media} output{label} not shown: this provider accepts text tool results only]"


def tool_result_text(block: ToolResultBlock) -> str:
    """A tool result as the single text that text-only tool messages carry."""
    return "\n".join(
        part.text if isinstance(part, TextBlock) else data_note(part) for part in block.output
    )


def _data_part(block: DataBlock) -> ChatCompletionContentPartParam:
    source = block.source
    if isinstance(source, FileIdSource):
        raise ModelError.invalid_request("Chat Completions does not support file_id data sources")
    if isinstance(source, UrlSource):
        if not source.media_type.startswith("image/"):
            raise ModelError.invalid_request(
                f"Chat Completions accepts URLs for images only, not {source.media_type}"
            )
        return {"type": "image_url", "image_url": {"url": source.url}}
    assert isinstance(source, Base64Source)
    data_url = f"data:{source.media_type};base64,{source.data}"
    if source.media_type.startswith("image/"):
        return {"type": "image_url", "image_url": {"url": data_url}}
    return {"type": "file", "file": {"file_data": data_url, "filename": block.name or "file"}}


def _system(message: Message) -> ChatCompletionSystemMessageParam:
    for block in message.content:
        if not isinstance(block, TextBlock):
            raise ModelError.invalid_request(f"a system message holds a {block.type} block")
    return {"role": "system", "content": message.text}


def _user(message: Message) -> ChatCompletionUserMessageParam:
    parts: list[ChatCompletionContentPartParam] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, DataBlock):
            parts.append(_data_part(block))
        elif isinstance(block, ThinkingBlock | ProviderOpaqueBlock):
            continue
        else:
            raise ModelError.invalid_request(f"a user message holds a {block.type} block")
    if all(part["type"] == "text" for part in parts):
        return {"role": "user", "content": message.text}
    return {"role": "user", "content": parts}


def _tool_call(block: ToolCallBlock) -> ChatCompletionMessageFunctionToolCallParam:
    return {
        "id": block.id,
        "type": "function",
        "function": {"name": block.name, "arguments": block.input or "{}"},
    }


def _assistant(message: Message) -> ChatCompletionAssistantMessageParam:
    calls: list[ChatCompletionMessageFunctionToolCallParam] = []
    for block in message.content:
        if isinstance(block, ToolCallBlock):
            calls.append(_tool_call(block))
        elif not isinstance(block, TextBlock | ThinkingBlock | ProviderOpaqueBlock):
            raise ModelError.invalid_request(f"an assistant message holds a {block.type} block")
    encoded: ChatCompletionAssistantMessageParam = {"role": "assistant"}
    text = message.text
    encoded["content"] = text if text or not calls else None
    if calls:
        encoded["tool_calls"] = calls
    return encoded


def _tool_results(message: Message) -> list[ChatCompletionToolMessageParam]:
    results: list[ChatCompletionToolMessageParam] = []
    for block in message.content:
        if not isinstance(block, ToolResultBlock):
            raise ModelError.invalid_request(f"a tool message holds a {block.type} block")
        results.append(
            {"role": "tool", "tool_call_id": block.id, "content": tool_result_text(block)}
        )
    return results


def encode_messages(messages: Sequence[Message]) -> list[ChatCompletionMessageParam]:
    encoded: list[ChatCompletionMessageParam] = []
    for message in messages:
        match message.role:
            case Role.SYSTEM:
                encoded.append(_system(message))
            case Role.USER:
                encoded.append(_user(message))
            case Role.ASSISTANT:
                encoded.append(_assistant(message))
            case Role.TOOL:
                encoded.extend(_tool_results(message))
            case _:
                assert_never(message.role)
    return encoded


def encode_tools(tools: Sequence[ToolDefinition]) -> list[ChatCompletionFunctionToolParam]:
    encoded: list[ChatCompletionFunctionToolParam] = []
    for tool in tools:
        function: FunctionDefinition = {
            "name": tool.name,
            "description": tool.description,
            "parameters": dict(tool.parameters) if tool.parameters else EMPTY_PARAMETERS_SCHEMA,
        }
        encoded.append({"type": "function", "function": function})
    return encoded
