"""Issue 27 point 4: an MCP tool's answer, untrusted, mapped to a tool result."""

from __future__ import annotations

import base64

import mcp_types as mcp

from openwork_chat_state.messages import Base64Source, DataBlock, TextBlock
from openwork_core.mcp.results import MAX_IMAGE_BYTES, NO_CONTENT_TEXT, tool_result
from openwork_tools.results import ToolErrorCode, ToolStatus

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32).decode()


def result(*content: object, structured: object = None, error: bool = False) -> mcp.CallToolResult:
    return mcp.CallToolResult(content=list(content), structured_content=structured, is_error=error)  # type: ignore[arg-type]


def test_text_blocks_are_the_result_text_in_order() -> None:
    mapped = tool_result(result(mcp.TextContent(text="one"), mcp.TextContent(text="two")))
    assert (mapped.status, mapped.text) == (ToolStatus.SUCCEEDED, "one\ntwo")


def test_a_real_png_is_a_data_block_after_its_text() -> None:
    mapped = tool_result(
        result(mcp.TextContent(text="logo:"), mcp.ImageContent(data=PNG, mime_type="image/png"))
    )
    assert mapped.content == (
        TextBlock(text="logo:"),
        DataBlock(source=Base64Source(data=PNG, media_type="image/png")),
    )


def test_an_image_a_provider_would_refuse_is_a_line_saying_what_was_left_out() -> None:
    """A bad image in the Conversation would make every later request fail."""
    cases = {
        "not valid base64": mcp.ImageContent(data="%%%not base64", mime_type="image/png"),
        "not a image/jpeg": mcp.ImageContent(data=PNG, mime_type="image/jpeg"),
        "not an image type": mcp.ImageContent(data=PNG, mime_type="image/svg+xml"),
        "byte limit": mcp.ImageContent(data="A" * (MAX_IMAGE_BYTES + 4), mime_type="image/png"),
    }
    for reason, image in cases.items():
        mapped = tool_result(result(image))
        assert not any(isinstance(b, DataBlock) for b in mapped.content)
        assert reason in mapped.text and mapped.text.startswith("[image left out:")


def test_resource_links_embedded_resources_and_audio_are_described() -> None:
    link = mcp.ResourceLink(
        name="readme", uri="file:///r.md", mime_type="text/markdown", size=12, description="doc"
    )
    embedded = mcp.EmbeddedResource(
        resource=mcp.TextResourceContents(uri="demo://t/1", text="resource body")
    )
    blob = mcp.EmbeddedResource(
        resource=mcp.BlobResourceContents(uri="demo://b/1", blob="AAAA", mime_type="app/x")
    )
    audio = mcp.AudioContent(data="AAAA", mime_type="audio/wav")
    text = tool_result(result(link, embedded, blob, audio)).text
    assert "[resource link readme <file:///r.md> (text/markdown, 12 bytes): doc]" in text
    assert "[resource demo://t/1]\nresource body" in text
    assert "[resource demo://b/1: 4 bytes of base64 app/x, not shown]" in text
    assert "[audio left out: audio/wav]" in text


def test_structured_content_is_the_text_only_when_the_server_sent_no_text() -> None:
    """The spec has a server repeat structured content as a text block: never paid twice."""
    value = {"temperature": 21, "big": 2**70}
    alone = tool_result(result(structured=value))
    assert alone.text == '{"temperature": 21, "big": 1180591620717411303424}'
    with_text = tool_result(result(mcp.TextContent(text="21 degrees"), structured=value))
    assert with_text.text == "21 degrees"


def test_is_error_makes_an_error_result_with_the_servers_text() -> None:
    mapped = tool_result(result(mcp.TextContent(text="no such repo"), error=True))
    assert mapped.status is ToolStatus.FAILED
    assert mapped.error is not None and mapped.error.code is ToolErrorCode.EXECUTION_FAILED
    assert mapped.text == "no such repo"


def test_an_empty_answer_says_so() -> None:
    assert tool_result(result()).text == NO_CONTENT_TEXT
