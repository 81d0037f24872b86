"""Rebuilding the model-visible Conversation from the database (compaction.md §8.1).

Latest checkpoint → its replayed raw user message → replay, summary and reminder items → the raw
messages after the install boundary, keeping their ``MessageKind``; no checkpoint → every message.
The watermark comes with it so Chat State starts with it. This restores the Conversation only:
not in-flight Turns, not a byte-replay of old requests.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from openwork_chat_state.item import ConversationItem
from openwork_core.ids import CompactionId, SessionId
from openwork_core.session.compaction.compacted_view import build_compacted_items
from openwork_core.session.compaction.errors import CheckpointUnreadable
from openwork_core.session.storage import CompactionStorage
from openwork_core.storage.codec import decode_message, to_item
from openwork_core.storage.compaction_records import ProjectionRows


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedConversation:
    items: tuple[ConversationItem, ...]
    watermark: int | None
    compaction_id: CompactionId | None
    """The checkpoint the projection starts from, if any."""


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Decoding a long session allocates ~10 objects per row and no cycles; the cyclic
    collector's full passes over the daemon's heap meanwhile cost more than the decode itself
    (issue 13, point 4). The loop runs without an ``await``: nothing else runs while it is off."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def project_rows(rows: ProjectionRows) -> LoadedConversation:
    """The pure half of ``load_conversation_items``."""
    with _collector_paused():
        raw = tuple(to_item(m) for m in rows.raw)
    checkpoint = rows.checkpoint
    if checkpoint is None:
        return LoadedConversation(items=raw, watermark=rows.watermark, compaction_id=None)
    if rows.replayed is None:
        raise CheckpointUnreadable(f"checkpoint {checkpoint.id} has no replayed user message")
    items = build_compacted_items(checkpoint, decode_message(rows.replayed), raw)
    return LoadedConversation(items=items, watermark=rows.watermark, compaction_id=checkpoint.id)


async def load_conversation_items(
    store: CompactionStorage, session_id: SessionId
) -> LoadedConversation:
    """Load the session's Conversation as Chat State should hold it (§8.1)."""
    return project_rows(await store.load_projection(session_id))
