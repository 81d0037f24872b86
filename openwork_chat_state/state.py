"""ConversationState: the pure, synchronous holder of every Chat State invariant (§4.1).

The actor owns one instance and is the only caller; tests use it without an event loop.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from openwork_chat_state.errors import (
    DuplicateToolCall,
    NoActiveDraft,
    PersistedSystemMessage,
    SystemMessageRejected,
    UnmatchedToolResult,
)
from openwork_chat_state.item import ConversationItem
from openwork_chat_state.messages import Role
from openwork_chat_state.view import ConversationContextView


@dataclass(slots=True)
class Draft:
    """The streaming assistant response; live only, never part of the Conversation."""

    text: str = ""
    reasoning: str = ""


@dataclass(slots=True)
class _Streaming:
    """The draft's deltas as they arrive, joined only when read (``+=`` per delta would copy the
    whole text each time: quadratic in a long response)."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _CallLedger:
    seen: set[str] = field(default_factory=set)
    open: set[str] = field(default_factory=set)

    def check(self, item: ConversationItem) -> None:
        """Raise if ``item`` would break the pairing rules; change nothing."""
        new_calls: set[str] = set()
        answered: set[str] = set()
        for call in item.message.tool_calls:
            if call.id in self.seen or call.id in new_calls:
                raise DuplicateToolCall(f"duplicate tool call id: {call.id}")
            new_calls.add(call.id)
        for result in item.message.tool_results:
            if result.id not in self.open or result.id in answered:
                raise UnmatchedToolResult(f"tool result has no open tool call: {result.id}")
            answered.add(result.id)

    def record(self, item: ConversationItem) -> None:
        for call in item.message.tool_calls:
            self.seen.add(call.id)
            self.open.add(call.id)
        for result in item.message.tool_results:
            self.open.discard(result.id)


class ConversationState:
    def __init__(self) -> None:
        self._items: list[ConversationItem] = []
        self._ledger = _CallLedger()
        self._watermark: int | None = None
        self._draft: _Streaming | None = None

    # -- loading and replacing -------------------------------------------------------------
    def load(self, items: Iterable[ConversationItem], watermark: int | None) -> None:
        """Replace everything with persisted items. A System message → PersistedSystemMessage;
        nothing changes when any item is rejected."""
        fresh = ConversationState()
        batch = list(items)
        for item in batch:
            if item.message.role is Role.SYSTEM:
                raise PersistedSystemMessage(
                    f"the persisted Conversation contains a system message: {item.message_id}"
                )
        fresh.append_all(batch)  # one trial ledger: linear in the items (issue 13, point 4)
        self._items, self._ledger = fresh._items, fresh._ledger
        self._watermark = watermark
        self._draft = None

    def replace_items(self, items: Iterable[ConversationItem]) -> None:
        """Install a compacted projection; the watermark is kept (compaction.md §2)."""
        watermark = self._watermark
        self.load(items, watermark)

    # -- appending -------------------------------------------------------------------------
    def append(self, item: ConversationItem) -> None:
        self.append_all((item,))

    def append_all(self, items: Iterable[ConversationItem]) -> None:
        """Append atomically: either every item is accepted or none is."""
        batch = list(items)
        trial = _CallLedger(set(self._ledger.seen), set(self._ledger.open))
        for item in batch:
            if item.message.role is Role.SYSTEM:
                raise SystemMessageRejected("Chat State does not accept system messages")
            trial.check(item)
            trial.record(item)
        self._items.extend(batch)
        self._ledger = trial

    # -- watermark ---------------------------------------------------------------------------
    def advance_watermark(self, sequence: int) -> None:
        """The pruning watermark only moves forward."""
        if self._watermark is None or sequence > self._watermark:
            self._watermark = sequence

    # -- draft -------------------------------------------------------------------------------
    def begin_draft(self) -> None:
        self._draft = _Streaming()

    def push_text_delta(self, delta: str) -> None:
        self._require_draft().text.append(delta)

    def push_reasoning_delta(self, delta: str) -> None:
        self._require_draft().reasoning.append(delta)

    def discard_draft(self) -> None:
        self._draft = None

    def commit_draft(self, item: ConversationItem) -> None:
        """The completed response, already persisted, replaces the draft."""
        self.append(item)
        self._draft = None

    def _require_draft(self) -> _Streaming:
        if self._draft is None:
            raise NoActiveDraft("no streaming draft is active")
        return self._draft

    # -- reading -----------------------------------------------------------------------------
    @property
    def draft(self) -> Draft | None:
        if self._draft is None:
            return None
        return Draft("".join(self._draft.text), "".join(self._draft.reasoning))

    def context_view(self) -> ConversationContextView:
        """The committed items and the watermark, without the draft."""
        return ConversationContextView(tuple(self._items), self._watermark)
