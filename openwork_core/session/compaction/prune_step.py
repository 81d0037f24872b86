"""Advancing the pruning watermark (compaction.md §2).

The watermark is the sequence of the latest persisted Assistant message; Tool Results at or below
it whose text exceeds 8 192 characters are pruned in the request copy (``context/prune.py``). The
steps, in order: reload the Conversation from the database (with sequences) → write the missing
spill files ``<spill dir>/<sanitized call id>.txt`` of the results that become prunable → replace
Chat State items with the loaded ones → write the watermark (``GREATEST``) → install it in Chat
State. Any failure only means "no pruning this time": a warning is logged and ``False`` returned.
Pruning creates no checkpoint.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path

import structlog

from openwork_chat_state.actor import ChatStateHandle
from openwork_chat_state.item import ConversationItem, RealOrigin
from openwork_chat_state.messages import Role
from openwork_core.context.prune import PRUNE_THRESHOLD_CHARS, result_text, spill_path
from openwork_core.ids import SessionId
from openwork_core.session.compaction.loading import load_conversation_items
from openwork_core.session.storage import CompactionStorage
from openwork_tools.faults import faultpoint

log = structlog.get_logger(__name__)


def latest_assistant_sequence(items: Sequence[ConversationItem]) -> int | None:
    sequences = [
        i.origin.sequence
        for i in items
        if i.message.role is Role.ASSISTANT and isinstance(i.origin, RealOrigin)
    ]
    return max(sequences, default=None)


def write_missing_spill_files(
    items: Sequence[ConversationItem], watermark: int, spill_dir: str
) -> list[Path]:
    """Write the full text of every prunable result that has no spill file yet; returns the
    files written. Existing files are kept as they are."""
    written: list[Path] = []
    for item in items:
        origin = item.origin
        if not isinstance(origin, RealOrigin) or origin.sequence > watermark:
            continue
        for result in item.message.tool_results:
            text = result_text(result)
            if len(text) <= PRUNE_THRESHOLD_CHARS:
                continue
            target = Path(spill_path(spill_dir, result.id))
            if target.exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
            partial.write_text(text, encoding="utf-8")
            partial.replace(target)
            written.append(target)
    return written


async def advance_prune_watermark(
    store: CompactionStorage, chat: ChatStateHandle, session_id: SessionId, spill_dir: str | None
) -> bool:
    """Run the §2 advance steps; ``True`` when the watermark moved forward and is installed."""
    try:
        loaded = await load_conversation_items(store, session_id)
        target = latest_assistant_sequence(loaded.items)
        if target is None or (loaded.watermark is not None and target <= loaded.watermark):
            return False
        if spill_dir is not None:
            await asyncio.to_thread(write_missing_spill_files, loaded.items, target, spill_dir)
        await chat.replace_items(loaded.items)
        stored = await store.advance_watermark(session_id, target)
        faultpoint("watermark_advanced")
        await chat.advance_watermark(stored)
    except Exception as exc:
        log.warning("compaction.prune_skipped", session_id=session_id, error=str(exc))
        return False
    log.info("compaction.prune_watermark_advanced", session_id=session_id, watermark=target)
    return True
