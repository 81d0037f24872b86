"""Compaction errors (compaction.md §7): one base, each subclass with a stable snake_case code.

Inside a Turn every one of them fails the Turn with ``compaction_error``; ``code`` is the detail
recorded on the Compaction Span and in logs."""

from __future__ import annotations

from typing import ClassVar

from openwork_chat_state.error_root import OpenWorkError
from openwork_core.ids import CompactionId


class CompactionError(OpenWorkError):
    code: ClassVar[str] = "compaction_error"
    http_status: ClassVar[int] = 502
    """The summary model failed or the checkpoint could not be installed: not the caller's
    input (docs/daemon-additions.md)."""


class MissingLastUser(CompactionError):
    """The projection holds no real user request to replay (§5)."""

    code = "missing_last_user"

    def __init__(self) -> None:
        super().__init__("the Conversation has no real user request to replay")


class SummaryInvalid(CompactionError):
    """One summary response broke a §3.2 rule; ``reason`` says which."""

    code = "summary_invalid"

    def __init__(self, reason: str) -> None:
        super().__init__(f"invalid compaction summary: {reason}")
        self.reason = reason


class SummaryRetriesExhausted(CompactionError):
    """Every summary attempt failed (§3.3); the old Conversation is unchanged."""

    code = "summary_retries_exhausted"

    def __init__(self, message: str, failure_classes: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.failure_classes = failure_classes
        """The §3.3 class of each failed attempt, in order."""


class RuntimeStateInvalid(CompactionError):
    """A stored runtime state or a ``file_change`` artifact could not be decoded (§4)."""

    code = "runtime_state_invalid"


class ReminderInvalid(CompactionError):
    """The rendered reminder broke a §4 rule (for example the 32 768-character cap)."""

    code = "reminder_invalid"


class CheckpointRejected(CompactionError):
    """The checkpoint write failed its §6 checks or the database refused it; nothing changed."""

    code = "checkpoint_rejected"
    http_status = 409


class CompactionStepFailed(CompactionError):
    """A step before the checkpoint write failed (a read, request assembly); nothing changed."""

    code = "compaction_step_failed"


class RewindRejected(CompactionError):
    """The rewind target is unknown or unusable (§8.3)."""

    code = "rewind_rejected"
    http_status = 409


class CompactionInstallFailed(CompactionError):
    """The checkpoint committed but Chat State did not take the new items (§7 step 8). The caller
    sets ``reload_required``; the checkpoint is not rolled back."""

    code = "compaction_install_failed"

    def __init__(self, compaction_id: CompactionId, detail: str) -> None:
        super().__init__(
            f"checkpoint {compaction_id} committed but the compacted Conversation could not be "
            f"installed: {detail}"
        )
        self.compaction_id = compaction_id


class CheckpointUnreadable(CompactionError):
    """A stored checkpoint cannot be projected (no replay anchor, unsupported format)."""

    code = "checkpoint_unreadable"
