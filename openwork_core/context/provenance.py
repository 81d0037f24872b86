"""Where each Conversation message of a request copy came from (context-window.md §6).

One entry per message after System, in order: a stored message's id, sequence and kind; a
compaction item's synthetic reason (a replay keeps the replayed message's id and sequence,
DESIGN.md §2); ``interrupted_tool_result`` for a result synthesized by normalization.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from pydantic import JsonValue

from openwork_chat_state.item import ConversationItem, MessageKind, RealOrigin, SyntheticOrigin
from openwork_core.ids import MessageId

INTERRUPTED_TOOL_RESULT_REASON = "interrupted_tool_result"


@dataclass(frozen=True, slots=True, kw_only=True)
class RealProvenance:
    """A persisted message."""

    message_id: MessageId
    sequence: int
    kind: MessageKind


@dataclass(frozen=True, slots=True, kw_only=True)
class SyntheticProvenance:
    """A message made by compaction (``reason`` = its ``SyntheticReason``) or by normalization
    (``interrupted_tool_result``)."""

    reason: str
    message_id: MessageId | None = None
    sequence: int | None = None


Provenance: TypeAlias = RealProvenance | SyntheticProvenance

SYNTHESIZED_RESULT_PROVENANCE = SyntheticProvenance(reason=INTERRUPTED_TOOL_RESULT_REASON)


def provenance_of(item: ConversationItem) -> Provenance:
    origin = item.origin
    if isinstance(origin, RealOrigin):
        return RealProvenance(
            message_id=origin.message_id, sequence=origin.sequence, kind=item.kind
        )
    assert isinstance(origin, SyntheticOrigin)
    return SyntheticProvenance(
        reason=origin.reason.value,
        message_id=origin.source_message_id,
        sequence=origin.source_sequence,
    )


def provenance_json(entry: Provenance) -> dict[str, JsonValue]:
    """The inspection's shape (daemon-api.md §3): ``{"message_id", "sequence", "kind"}`` or
    ``{"synthetic": reason}``, plus the source id and sequence when a synthetic item has them."""
    if isinstance(entry, RealProvenance):
        return {
            "message_id": entry.message_id,
            "sequence": entry.sequence,
            "kind": entry.kind.value,
        }
    out: dict[str, JsonValue] = {"synthetic": entry.reason}
    if entry.message_id is not None:
        out["message_id"] = entry.message_id
    if entry.sequence is not None:
        out["sequence"] = entry.sequence
    return out
