"""Compaction (compaction.md): summary, runtime state and reminder, the compacted view,
checkpoints, pruning watermark, rewind and the trigger policy. Storage lives in
``openwork_core.storage.compaction_records`` (the PostgreSQL implementation of its storage:
``openwork_core.storage.postgres.compactions``)."""

from __future__ import annotations

from openwork_core.session.compaction.compacted_view import (
    SUMMARY_PREFIX,
    build_compacted_items,
    is_real_user_request,
    last_real_user,
)
from openwork_core.session.compaction.errors import (
    CheckpointRejected,
    CheckpointUnreadable,
    CompactionError,
    CompactionIneffective,
    CompactionInstallFailed,
    CompactionStepFailed,
    MissingLastUser,
    ReminderInvalid,
    RewindRejected,
    RuntimeStateInvalid,
    SummaryInvalid,
    SummaryRetriesExhausted,
)
from openwork_core.session.compaction.generation import (
    SummaryAttempt,
    SummaryFailureClass,
    SummaryOutcome,
    SummarySettings,
    generate_summary,
)
from openwork_core.session.compaction.loading import LoadedConversation, load_conversation_items
from openwork_core.session.compaction.policy import (
    INEFFECTIVE_COMPACTION_MESSAGE,
    SUMMARY_FLOOR_TOKENS,
    CompactionEffect,
    ThresholdDecision,
    compaction_floor,
    compaction_ineffective,
    ineffective_compaction_error,
    overflow_can_compact,
    overflow_due,
    threshold_decision,
    threshold_due,
)
from openwork_core.session.compaction.prune_step import advance_prune_watermark
from openwork_core.session.compaction.reminder import EMPTY_REMINDER, render_reminder
from openwork_core.session.compaction.run import (
    CompactionDeps,
    CompactionResult,
    CompactionTimings,
    rewind,
    run_compaction,
)
from openwork_core.session.compaction.runtime_state import (
    CompactionRuntimeState,
    StoredPlan,
    collect_runtime_state,
)
from openwork_core.session.compaction.summary import (
    SUMMARY_INSTRUCTION,
    build_summary_request,
    validate_summary,
)
from openwork_core.storage.compaction_records import CheckpointRecord, TranscriptPage

__all__ = [
    "EMPTY_REMINDER",
    "INEFFECTIVE_COMPACTION_MESSAGE",
    "SUMMARY_FLOOR_TOKENS",
    "SUMMARY_INSTRUCTION",
    "SUMMARY_PREFIX",
    "CheckpointRecord",
    "CheckpointRejected",
    "CheckpointUnreadable",
    "CompactionDeps",
    "CompactionEffect",
    "CompactionError",
    "CompactionIneffective",
    "CompactionInstallFailed",
    "CompactionResult",
    "CompactionRuntimeState",
    "CompactionStepFailed",
    "CompactionTimings",
    "LoadedConversation",
    "MissingLastUser",
    "ReminderInvalid",
    "RewindRejected",
    "RuntimeStateInvalid",
    "StoredPlan",
    "SummaryAttempt",
    "SummaryFailureClass",
    "SummaryInvalid",
    "SummaryOutcome",
    "SummaryRetriesExhausted",
    "SummarySettings",
    "ThresholdDecision",
    "TranscriptPage",
    "advance_prune_watermark",
    "build_compacted_items",
    "build_summary_request",
    "collect_runtime_state",
    "compaction_floor",
    "compaction_ineffective",
    "generate_summary",
    "ineffective_compaction_error",
    "is_real_user_request",
    "last_real_user",
    "load_conversation_items",
    "overflow_can_compact",
    "overflow_due",
    "render_reminder",
    "rewind",
    "run_compaction",
    "threshold_decision",
    "threshold_due",
    "validate_summary",
]
