"""Message value types: the lowest layer, shared by Chat State, the context engine, tools and adapters.

Every value is a frozen slotted dataclass whose field order is its wire order, so that
``orjson.dumps`` of a ``Message`` is the compact, provider-neutral JSON of model-providers.md §1.
Fields whose name starts with ``_`` are caches; orjson never serializes them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Annotated, Literal, TypeAlias

from pydantic import Field, JsonValue, TypeAdapter

JsonObject: TypeAlias = dict[str, JsonValue]


class Role(enum.StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class ToolCallState(enum.StrEnum):
    PENDING = "pending"
    SUBMITTED = "submitted"
    FINISHED = "finished"


class ToolResultState(enum.StrEnum):
    SUCCESS = "success"
    ERROR = "error"
    INTERRUPTED = "interrupted"
    DENIED = "denied"
    RUNNING = "running"


@dataclass(frozen=True, slots=True, kw_only=True)
class UrlSource:
    source_type: Literal["url"] = "url"
    url: str
    media_type: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Base64Source:
    source_type: Literal["base64"] = "base64"
    data: str
    media_type: str


@dataclass(frozen=True, slots=True, kw_only=True)
class FileIdSource:
    source_type: Literal["file_id"] = "file_id"
    id: str


DataSource: TypeAlias = Annotated[
    UrlSource | Base64Source | FileIdSource, Field(discriminator="source_type")
]


@dataclass(frozen=True, slots=True, kw_only=True)
class TextBlock:
    type: Literal["text"] = "text"
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingBlock:
    type: Literal["thinking"] = "thinking"
    thinking: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DataBlock:
    type: Literal["data"] = "data"
    source: DataSource
    name: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallBlock:
    """A model's request to run a tool. ``input`` is the JSON text of the arguments."""

    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    input: str
    state: ToolCallState = ToolCallState.SUBMITTED


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderOpaqueBlock:
    """Produced by an adapter; only ever sent back to the same driver, never edited by Core."""

    type: Literal["provider_opaque"] = "provider_opaque"
    driver: str
    kind: str
    payload: JsonValue


ToolOutputBlock: TypeAlias = Annotated[TextBlock | DataBlock, Field(discriminator="type")]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultBlock:
    """The model-visible result of one tool call. UI artifacts are stored beside it, never here."""

    type: Literal["tool_result"] = "tool_result"
    id: str
    name: str
    output: tuple[ToolOutputBlock, ...]
    state: ToolResultState


ContentBlock: TypeAlias = Annotated[
    TextBlock | ThinkingBlock | DataBlock | ToolCallBlock | ToolResultBlock | ProviderOpaqueBlock,
    Field(discriminator="type"),
]


@dataclass(frozen=True, slots=True, kw_only=True, weakref_slot=True)
class Message:
    """``weakref_slot``: adapters keep per-message encodings only as long as the message lives."""

    role: Role
    content: tuple[ContentBlock, ...]

    @property
    def text(self) -> str:
        """The concatenated text blocks (used for final answers and notices)."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> tuple[ToolCallBlock, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolCallBlock))

    @property
    def tool_results(self) -> tuple[ToolResultBlock, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolResultBlock))


def user_text(text: str) -> Message:
    return Message(role=Role.USER, content=(TextBlock(text=text),))


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolDefinition:
    """One advertised tool: the model sees exactly these three fields."""

    name: str
    description: str
    parameters: JsonObject = field(default_factory=dict)


CONTENT_BLOCKS: TypeAdapter[list[ContentBlock]] = TypeAdapter(list[ContentBlock])
"""Validates stored or client-supplied JSON content into typed blocks."""
