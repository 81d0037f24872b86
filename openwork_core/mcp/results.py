"""An MCP ``CallToolResult`` as a tool result (issue 27 point 4; docs/mcp.md "Results"), pure.

The server's answer is untrusted input. Text blocks are kept in order; an image becomes a data
block only when it is a real PNG, JPEG, GIF or WebP (valid base64, matching signature) of at most
``MAX_IMAGE_BYTES``, at most ``MAX_IMAGES`` per result (a bad image in the Conversation would make
every later request fail: providers refuse it); any other image, audio and binary resources
become a line saying what was left out. A resource link is a line with its URI; an embedded text
resource is its text under its URI; ``structuredContent`` is the JSON text only when the result
has no text (the spec has a server repeat it as text; both would be paid twice). ``isError`` makes the result an error result. The 32,000-byte cap
and the spill file are applied by ``FinalizedToolset.call``, as for every tool."""

from __future__ import annotations

import base64
import binascii
import json

import mcp_types as mcp
import orjson

from openwork_chat_state.messages import Base64Source, DataBlock, TextBlock, ToolOutputBlock
from openwork_tools.results import ToolErrorCode, ToolResult, ToolStatus

MAX_IMAGES = 4
MAX_IMAGE_BYTES = 256 * 1024
"""Of base64 text: the request estimate counts its bytes like text (⌈bytes / 4⌉ tokens)."""
NO_CONTENT_TEXT = "(the tool returned no content)"
_SIGNATURES = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}


def _image_problem(data: str, media_type: str) -> str | None:
    signatures = _SIGNATURES.get(media_type)
    if signatures is None:
        return f"{media_type[:80]} is not an image type models accept"
    if len(data) > MAX_IMAGE_BYTES:
        return f"{len(data)} bytes of base64, over the {MAX_IMAGE_BYTES}-byte limit"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return "not valid base64"
    if not raw.startswith(signatures) or (media_type == "image/webp" and raw[8:12] != b"WEBP"):
        return f"the data is not a {media_type}"
    return None


def _resource_text(resource: mcp.TextResourceContents | mcp.BlobResourceContents) -> str:
    if isinstance(resource, mcp.TextResourceContents):
        return f"[resource {resource.uri}]\n{resource.text}"
    mime = resource.mime_type or "binary data"
    return f"[resource {resource.uri}: {len(resource.blob)} bytes of base64 {mime}, not shown]"


def _link_text(link: mcp.ResourceLink) -> str:
    facts = [f for f in (link.mime_type, None if link.size is None else f"{link.size} bytes") if f]
    detail = f" ({', '.join(facts)})" if facts else ""
    about = f": {link.description}" if link.description else ""
    return f"[resource link {link.name} <{link.uri}>{detail}{about}]"


def _blocks(result: mcp.CallToolResult) -> list[ToolOutputBlock]:
    blocks: list[ToolOutputBlock] = []
    images = 0
    for item in result.content:
        if isinstance(item, mcp.TextContent):
            blocks.append(TextBlock(text=item.text))
        elif isinstance(item, mcp.ImageContent):
            problem = _image_problem(item.data, item.mime_type)
            if problem is None and images >= MAX_IMAGES:
                problem = f"more than {MAX_IMAGES} images in one result"
            if problem is None:
                images += 1
                source = Base64Source(data=item.data, media_type=item.mime_type)
                blocks.append(DataBlock(source=source))
            else:
                blocks.append(TextBlock(text=f"[image left out: {problem}]"))
        elif isinstance(item, mcp.AudioContent):
            blocks.append(TextBlock(text=f"[audio left out: {item.mime_type[:80]}]"))
        elif isinstance(item, mcp.ResourceLink):
            blocks.append(TextBlock(text=_link_text(item)))
        elif isinstance(item, mcp.EmbeddedResource):
            blocks.append(TextBlock(text=_resource_text(item.resource)))
        else:  # a content type newer than this mapping
            blocks.append(TextBlock(text=f"[content of type {type(item).__name__} left out]"))
    structured = result.structured_content
    if structured is not None and not any(isinstance(b, TextBlock) for b in blocks):
        blocks.append(TextBlock(text=_json_text(structured)))
    return blocks


def _json_text(value: object) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # an integer past 64 bits: valid JSON all the same
        return json.dumps(value, ensure_ascii=False)


def _joined(blocks: list[ToolOutputBlock]) -> tuple[ToolOutputBlock, ...]:
    """Consecutive text blocks joined by newlines (one text for the cap to measure)."""
    out: list[ToolOutputBlock] = []
    for block in blocks:
        previous = out[-1] if out else None
        if isinstance(block, TextBlock) and isinstance(previous, TextBlock):
            out[-1] = TextBlock(text=f"{previous.text}\n{block.text}")
        else:
            out.append(block)
    return tuple(out)


def tool_result(result: mcp.CallToolResult) -> ToolResult:
    """The tool result of one answered call."""
    blocks = _blocks(result)
    if not any(isinstance(b, TextBlock) for b in blocks):
        blocks.insert(0, TextBlock(text=NO_CONTENT_TEXT))
    content = _joined(blocks)
    if result.is_error:
        text = "".join(b.text for b in content if isinstance(b, TextBlock))
        return ToolResult.fail(ToolErrorCode.EXECUTION_FAILED, text)
    return ToolResult(status=ToolStatus.SUCCEEDED, content=content)
