"""ModelRequest → Anthropic Messages parameters (model-providers.md §1, §5), pure.

- system messages → the ``system`` parameter (one text block per part);
- user text/data → ``text``, ``image`` (base64 or URL) and PDF ``document`` blocks; ``file_id``
  sources are not supported here → ``invalid_request``;
- assistant → signed thinking (provider-opaque blocks of driver ``anthropic`` made by this
  endpoint for this model; see ``opaque``) first, then text, then ``tool_use`` blocks; plain
  thinking blocks, other drivers' blocks and thinking of another endpoint or model are dropped;
- tool results → ``tool_result`` blocks in a user message; consecutive messages of the same wire
  role are merged into one message (tool results first), as the API requires;
- prompt caching (``with_cache_breakpoints``): ``cache_control: {"type": "ephemeral"}`` on the
  last tool definition, on the last system block and on the last block of the newest message —
  at most three of the API's four breakpoints — so each call reads the previous call's prefix
  from the cache. The markers exist only in the encoded parameters: the request copy the budget
  measures is unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal, cast

from anthropic.types import (
    AssistantMessageParam,
    CacheControlEphemeralParam,
    ContentBlockParam,
    DocumentBlockParam,
    ImageBlockParam,
    MessageParam,
    TextBlockParam,
    ThinkingConfigParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
    UserMessageParam,
)

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
    ToolResultState,
    UrlSource,
)
from openwork_core.models.adapters.opaque import OpaqueScope, replayable
from openwork_core.models.port import ModelError, ThinkingConfig

DRIVER = "anthropic"
"""``ProviderOpaqueBlock.driver`` of the blocks this adapter produces and accepts back."""

DEFAULT_MAX_TOKENS = 8192
"""``max_tokens`` is required by the Messages API; used when the request sets no output cap."""

MIN_THINKING_BUDGET = 1024

EPHEMERAL: CacheControlEphemeralParam = {"type": "ephemeral"}

_UNCACHEABLE = ("thinking", "redacted_thinking")

_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
ImageMediaType = Literal["image/jpeg", "image/png", "image/gif", "image/webp"]


def _data(block: DataBlock) -> ImageBlockParam | DocumentBlockParam:
    source = block.source
    if isinstance(source, FileIdSource):
        raise ModelError.invalid_request("the Anthropic adapter does not send file_id sources")
    media = source.media_type
    if isinstance(source, UrlSource):
        if media in _IMAGE_TYPES:
            return {"type": "image", "source": {"type": "url", "url": source.url}}
        if media == "application/pdf":
            return {"type": "document", "source": {"type": "url", "url": source.url}}
    elif isinstance(source, Base64Source):
        if media in _IMAGE_TYPES:
            image_media = cast(ImageMediaType, media)
            return {
                "type": "image",
                "source": {"type": "base64", "media_type": image_media, "data": source.data},
            }
        if media == "application/pdf":
            return {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": source.data},
            }
    raise ModelError.invalid_request(f"Anthropic Messages does not accept {media} data")


def _tool_result(block: ToolResultBlock) -> ToolResultBlockParam:
    content: list[TextBlockParam | ImageBlockParam | DocumentBlockParam] = []
    for part in block.output:
        if isinstance(part, TextBlock):
            if part.text:
                content.append({"type": "text", "text": part.text})
        else:
            content.append(_data(part))
    encoded: ToolResultBlockParam = {"type": "tool_result", "tool_use_id": block.id}
    if content:
        encoded["content"] = content
    if block.state is not ToolResultState.SUCCESS:
        encoded["is_error"] = True
    return encoded


def _opaque(block: ProviderOpaqueBlock, scope: OpaqueScope | None) -> ContentBlockParam | None:
    payload = replayable(block, DRIVER, scope)
    if payload is None:
        return None
    if block.kind == "thinking":
        thinking, signature = payload.get("thinking"), payload.get("signature")
        if isinstance(thinking, str) and isinstance(signature, str):
            return {"type": "thinking", "thinking": thinking, "signature": signature}
    if block.kind == "redacted_thinking" and isinstance(payload.get("data"), str):
        return {"type": "redacted_thinking", "data": str(payload["data"])}
    return None


def _tool_input(block: ToolCallBlock) -> dict[str, object]:
    try:
        value = json.loads(block.input or "{}")
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise ModelError.invalid_request(f"tool call {block.id} has input that is not an object")
    return cast(dict[str, object], value)


def _assistant_blocks(message: Message, scope: OpaqueScope | None) -> list[ContentBlockParam]:
    thinking: list[ContentBlockParam] = []
    rest: list[ContentBlockParam] = []
    for block in message.content:
        if isinstance(block, ProviderOpaqueBlock):
            encoded = _opaque(block, scope)
            if encoded is not None:
                thinking.append(encoded)
        elif isinstance(block, TextBlock):
            if block.text:
                rest.append({"type": "text", "text": block.text})
        elif isinstance(block, ToolCallBlock):
            tool_use: ToolUseBlockParam = {
                "type": "tool_use",
                "id": block.id,
                "name": block.name,
                "input": _tool_input(block),
            }
            rest.append(tool_use)
        elif not isinstance(block, ThinkingBlock):
            raise ModelError.invalid_request(f"an assistant message holds a {block.type} block")
    return thinking + rest


def _user_blocks(message: Message) -> list[ContentBlockParam]:
    blocks: list[ContentBlockParam] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, DataBlock):
            blocks.append(_data(block))
        elif isinstance(block, ToolResultBlock) and message.role is Role.TOOL:
            blocks.append(_tool_result(block))
        elif not isinstance(block, ThinkingBlock | ProviderOpaqueBlock):
            raise ModelError.invalid_request(f"a {message.role} message holds a {block.type} block")
    return blocks


def encode_system(messages: Sequence[Message]) -> list[TextBlockParam]:
    return [{"type": "text", "text": m.text} for m in messages if m.role is Role.SYSTEM and m.text]


def encode_messages(
    messages: Sequence[Message], scope: OpaqueScope | None = None
) -> list[MessageParam]:
    """``scope``: the endpoint and model of this request (signed thinking made there goes back)."""
    encoded: list[MessageParam] = []
    merged: list[list[ContentBlockParam]] = []
    for message in messages:
        if message.role is Role.SYSTEM:
            continue
        if message.role is Role.ASSISTANT:
            role: Literal["user", "assistant"] = "assistant"
            blocks = _assistant_blocks(message, scope)
        else:
            role = "user"
            blocks = _user_blocks(message)
        if not blocks:
            continue
        if encoded and encoded[-1]["role"] == role:
            combined = merged[-1] + blocks
            results = [b for b in combined if b["type"] == "tool_result"]
            merged[-1][:] = results + [b for b in combined if b["type"] != "tool_result"]
            continue
        merged.append(blocks)
        if role == "assistant":
            assistant: AssistantMessageParam = {"role": "assistant", "content": blocks}
            encoded.append(assistant)
        else:
            user: UserMessageParam = {"role": "user", "content": blocks}
            encoded.append(user)
    return encoded


def encode_tools(tools: Sequence[ToolDefinition]) -> list[ToolParam]:
    return [
        {
            "name": tool.name,
            "description": tool.description,
            "input_schema": cast(
                dict[str, object], dict(tool.parameters) or {"type": "object", "properties": {}}
            ),
        }
        for tool in tools
    ]


def encode_thinking(thinking: ThinkingConfig | None, max_tokens: int) -> ThinkingConfigParam | None:
    """``enabled`` → a budget of half the output cap (at least 1,024, below ``max_tokens``);
    a cap too small for that budget sends no thinking configuration."""
    if thinking is None:
        return None
    if thinking.mode == "disabled":
        return {"type": "disabled"}
    budget = max(MIN_THINKING_BUDGET, max_tokens // 2)
    if budget >= max_tokens:
        return None
    return {"type": "enabled", "budget_tokens": budget}


def with_cache_breakpoints(
    system: Sequence[TextBlockParam],
    tools: Sequence[ToolParam],
    messages: Sequence[MessageParam],
) -> tuple[list[TextBlockParam], list[ToolParam], list[MessageParam]]:
    """Copies of the three regions with the prompt-cache markers (see the module docstring); the
    inputs are not modified. A newest message whose blocks cannot carry a marker (thinking only)
    gets none."""
    marked_tools = list(tools)
    if marked_tools:
        marked_tools[-1] = cast(ToolParam, {**marked_tools[-1], "cache_control": EPHEMERAL})
    marked_system = list(system)
    if marked_system:
        marked_system[-1] = cast(TextBlockParam, {**marked_system[-1], "cache_control": EPHEMERAL})
    marked_messages = list(messages)
    if marked_messages:
        newest = marked_messages[-1]
        content = newest["content"]
        blocks: list[ContentBlockParam] = (
            [{"type": "text", "text": content}]
            if isinstance(content, str)
            else list(cast(Sequence[ContentBlockParam], content))
        )
        for position in range(len(blocks) - 1, -1, -1):
            block = blocks[position]
            if block["type"] in _UNCACHEABLE or (block["type"] == "text" and not block["text"]):
                continue
            blocks[position] = cast(ContentBlockParam, {**block, "cache_control": EPHEMERAL})
            marked_messages[-1] = cast(MessageParam, {**newest, "content": blocks})
            break
    return marked_system, marked_tools, marked_messages
