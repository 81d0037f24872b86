"""Builders for context-engine tests: items, views, capabilities and a prepare shortcut."""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from openwork_chat_state.item import (
    ConversationItem,
    MessageKind,
    RealOrigin,
    SyntheticOrigin,
    SyntheticReason,
)
from openwork_chat_state.messages import (
    Base64Source,
    ContentBlock,
    DataBlock,
    Message,
    Role,
    TextBlock,
    ToolCallBlock,
    ToolDefinition,
    ToolOutputBlock,
    ToolResultBlock,
    ToolResultState,
)
from openwork_chat_state.view import ConversationContextView
from openwork_core.context.budget import (
    ContextBudgetEstimate,
    estimate_system_context_tokens,
    estimate_tool_surface_tokens,
)
from openwork_core.context.builder import ResolvedSystemContext, SystemContextBuilder
from openwork_core.context.engine import ContextEngine, PreparedModelCall
from openwork_core.context.wire import json_size, tokens_for_bytes
from openwork_core.models.capabilities import ModelCapabilities

CAPS = ModelCapabilities(context_window_tokens=200_000, max_output_tokens=32_000)
NO_DATA_CAPS = ModelCapabilities(
    context_window_tokens=200_000, max_output_tokens=32_000, accepts_data_blocks=False
)
SYSTEM = SystemContextBuilder().build("You are a careful coding agent.")
TOOLS = (
    ToolDefinition(
        name="read",
        description="Read a file.",
        parameters={"type": "object", "properties": {"path": {"type": "string"}}},
    ),
)


class History:
    """Appends items with increasing sequences."""

    def __init__(self) -> None:
        self.items: list[ConversationItem] = []
        self._seq = 0

    def add(self, message: Message, kind: MessageKind = MessageKind.NORMAL) -> ConversationItem:
        self._seq += 1
        item = ConversationItem(
            message=message,
            kind=kind,
            origin=RealOrigin(message_id=f"m{self._seq}", sequence=self._seq),
        )
        self.items.append(item)
        return item

    def user(self, text: str, kind: MessageKind = MessageKind.NORMAL) -> ConversationItem:
        return self.add(Message(role=Role.USER, content=(TextBlock(text=text),)), kind)

    def assistant(self, text: str = "", *calls: tuple[str, str]) -> ConversationItem:
        blocks: list[ContentBlock] = [TextBlock(text=text)] if text else []
        blocks += [ToolCallBlock(id=cid, name=name, input="{}") for cid, name in calls]
        return self.add(Message(role=Role.ASSISTANT, content=tuple(blocks)))

    def result(
        self,
        call_id: str,
        *output: ToolOutputBlock | str,
        name: str = "read",
        state: ToolResultState = ToolResultState.SUCCESS,
    ) -> ConversationItem:
        blocks = tuple(TextBlock(text=o) if isinstance(o, str) else o for o in output)
        block = ToolResultBlock(id=call_id, name=name, output=blocks, state=state)
        return self.add(Message(role=Role.TOOL, content=(block,)))

    def synthetic(self, reason: SyntheticReason, text: str) -> ConversationItem:
        item = ConversationItem(
            message=Message(role=Role.USER, content=(TextBlock(text=text),)),
            origin=SyntheticOrigin(compaction_id="c1", reason=reason),
        )
        self.items.append(item)
        return item

    @property
    def last_sequence(self) -> int:
        return self._seq

    def view(self, watermark: int | None = None) -> ConversationContextView:
        return ConversationContextView(tuple(self.items), watermark)


def image(data: str = "aGVsbG8=") -> DataBlock:
    return DataBlock(source=Base64Source(data=data, media_type="image/png"), name="shot.png")


def prepare(
    view: ConversationContextView,
    *,
    capabilities: ModelCapabilities = CAPS,
    system: ResolvedSystemContext = SYSTEM,
    tools: Sequence[ToolDefinition] = TOOLS,
    spill_dir: str | None = "/spill/s1",
) -> PreparedModelCall:
    return ContextEngine().prepare(
        model="test-model",
        capabilities=capabilities,
        system=system,
        view=view,
        tools=tools,
        spill_dir=spill_dir,
    )


def fresh(view: ConversationContextView) -> ConversationContextView:
    """The same items with empty caches."""
    items = tuple(
        ConversationItem(message=i.message, kind=i.kind, origin=i.origin) for i in view.items
    )
    return ConversationContextView(items, view.tool_result_pruned_through_sequence)


def measured_budget(
    system: ResolvedSystemContext,
    conversation: Sequence[Message],
    tools: Sequence[ToolDefinition],
    reserved_output_tokens: int,
) -> ContextBudgetEstimate:
    """The three regions serialized and measured afresh (the reference the engine's cached sizes
    must agree with)."""
    return ContextBudgetEstimate.from_regions(
        system_context_tokens=estimate_system_context_tokens(system),
        conversation_tokens=tokens_for_bytes(json_size(tuple(conversation))),
        tool_surface_tokens=estimate_tool_surface_tokens(tools),
        reserved_output_tokens=reserved_output_tokens,
    )


def tokens(value: object) -> int:
    return -(-len(orjson.dumps(value)) // 4)


def result_blocks(message: Message) -> tuple[ToolResultBlock, ...]:
    return message.tool_results


def only_text(message: Message) -> str:
    (block,) = message.tool_results
    texts = [b.text for b in block.output if isinstance(b, TextBlock)]
    assert len(texts) == 1
    return texts[0]
