"""Ids are minted in one place, one function per kind, in the formats already stored
(DESIGN.md §4 item 4: typed values; compaction.md §3.3: a checkpoint id is the uuid of
``<session-id>-compaction-<uuid>-summary-<n>``)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

import pytest

from openwork_core.ids import (
    new_agent_request_id,
    new_compaction_id,
    new_daemon_id,
    new_message_id,
    new_session_id,
    new_span_id,
    new_tool_call_id,
    new_turn_id,
)

PREFIXED: list[tuple[Callable[[], str], str]] = [
    (new_session_id, "ses"),
    (new_turn_id, "turn"),
    (new_message_id, "msg"),
    (new_tool_call_id, "tc"),
    (new_span_id, "span"),
    (new_agent_request_id, "agent"),
    (new_daemon_id, "dmn"),
]


@pytest.mark.parametrize(("mint", "prefix"), PREFIXED, ids=[p for _, p in PREFIXED])
def test_prefixed_ids_are_the_prefix_and_a_fresh_uuid4_hex(
    mint: Callable[[], str], prefix: str
) -> None:
    """Each kind keeps its prefix and 32 lowercase hex digits of a version-4 uuid; two are never
    the same."""
    first, second = mint(), mint()
    assert re.fullmatch(rf"{prefix}_[0-9a-f]{{32}}", first)
    assert uuid.UUID(hex=first.removeprefix(f"{prefix}_")).version == 4
    assert first != second


def test_compaction_ids_are_bare_uuid4_strings() -> None:
    """compaction.md §3.3: the checkpoint id is the uuid itself (no prefix)."""
    first, second = new_compaction_id(), new_compaction_id()
    assert str(uuid.UUID(first)) == first
    assert uuid.UUID(first).version == 4
    assert first != second
