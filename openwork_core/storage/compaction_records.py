"""Compaction's records (compaction.md §6, §8): checkpoints, the projection read, transcript
pages; domain values shared by the storage port and its implementations."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from openwork_core.ids import CompactionId, MessageId, SessionId, TurnId
from openwork_core.storage.errors import StorageError
from openwork_core.storage.records import StoredMessage

CHECKPOINT_FORMAT_VERSION = 1
SUMMARY_FORMAT_VERSION = 1
RUNTIME_REMINDER_FORMAT_VERSION = 1
TRANSCRIPT_DEFAULT_LIMIT = 20
TRANSCRIPT_MAX_LIMIT = 50


class CompactionKind(enum.StrEnum):
    MANUAL = "manual"
    THRESHOLD = "threshold"
    OVERFLOW = "overflow"
    REWIND = "rewind"


class CheckpointCheckFailed(StorageError):
    """A §6 precondition did not hold; nothing was written."""

    code = "checkpoint_check_failed"


class NoCheckpoint(StorageError):
    """Transcript read-back needs a checkpoint and the session has none (§8.4)."""

    code = "no_compaction_checkpoint"


class TranscriptQueryInvalid(StorageError):
    """``limit`` outside 1–50 or a negative ``afterSequence`` (§8.4)."""

    code = "invalid_transcript_query"


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointRecord:
    id: CompactionId
    session_id: SessionId
    sequence: int
    kind: CompactionKind
    through_message_sequence: int
    replaced_through_message_sequence: int
    source_message_count: int
    checkpoint_format_version: int
    summary_format_version: int
    last_user_message_id: MessageId | None
    last_user_message_sequence: int | None
    resolved_model_name: str
    summary: str
    runtime_state: str
    """The JSON object text of the runtime state (``CompactionRuntimeState.to_json``)."""
    runtime_reminder_format_version: int
    runtime_reminder: str
    trigger_turn_id: TurnId | None
    parent_compaction_id: CompactionId | None
    input_tokens: int | None
    output_tokens: int | None
    created_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class NewCheckpoint:
    """What the caller decides; sequence and boundaries are computed under the session lock.

    ``expected_max_sequence``: the max message sequence the caller summarised; a different current
    max rejects the write (messages the summary never saw would otherwise be hidden).
    ``rewind_through_message_sequence``: a rewind's fact boundary (its target's)."""

    id: CompactionId
    session_id: SessionId
    kind: CompactionKind
    source_message_count: int
    last_user_message_id: MessageId
    last_user_message_sequence: int
    resolved_model_name: str
    summary: str
    runtime_state: str
    runtime_reminder: str
    trigger_turn_id: TurnId | None = None
    parent_compaction_id: CompactionId | None = None
    rewind_through_message_sequence: int | None = None
    expected_max_sequence: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectionRows:
    """§8.1 in one read: latest checkpoint, its replayed message, raw messages after its install
    boundary (all without a checkpoint), the pruning watermark."""

    checkpoint: CheckpointRecord | None
    replayed: StoredMessage | None
    raw: tuple[StoredMessage, ...]
    watermark: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionMessageContents:
    max_sequence: int
    contents: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class TranscriptPage:
    compaction_id: CompactionId
    through_message_sequence: int
    messages: tuple[StoredMessage, ...]
    has_more: bool
    next_after_sequence: int
