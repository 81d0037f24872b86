"""The ids a Conversation item carries (context-window.md §4.1): the ``messages`` row behind a real
item and the compaction behind a synthetic one. ``openwork_core.ids`` mints them."""

from __future__ import annotations

from typing import NewType

MessageId = NewType("MessageId", str)
"""A ``messages`` row: ``msg_<32 hex>``."""

CompactionId = NewType("CompactionId", str)
"""A compaction checkpoint: a bare uuid4 (``<8>-<4>-<4>-<4>-<12>``)."""
