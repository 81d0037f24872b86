"""Compaction (compaction.md): summary, runtime state and reminder, the compacted view,
checkpoints, pruning watermark, rewind and the trigger policy. Storage lives in
``openwork_core.storage.compaction_records`` (the PostgreSQL implementation of its storage:
``openwork_core.storage.postgres.compactions``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openwork_core.lazy_exports import lazy_getattr

if TYPE_CHECKING:
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

_EXPORTS = {
    "CheckpointRecord": "openwork_core.storage.compaction_records",
    "CheckpointRejected": "openwork_core.session.compaction.errors",
    "CheckpointUnreadable": "openwork_core.session.compaction.errors",
    "CompactionDeps": "openwork_core.session.compaction.run",
    "CompactionEffect": "openwork_core.session.compaction.policy",
    "CompactionError": "openwork_core.session.compaction.errors",
    "CompactionIneffective": "openwork_core.session.compaction.errors",
    "CompactionInstallFailed": "openwork_core.session.compaction.errors",
    "CompactionResult": "openwork_core.session.compaction.run",
    "CompactionRuntimeState": "openwork_core.session.compaction.runtime_state",
    "CompactionStepFailed": "openwork_core.session.compaction.errors",
    "CompactionTimings": "openwork_core.session.compaction.run",
    "EMPTY_REMINDER": "openwork_core.session.compaction.reminder",
    "INEFFECTIVE_COMPACTION_MESSAGE": "openwork_core.session.compaction.policy",
    "LoadedConversation": "openwork_core.session.compaction.loading",
    "MissingLastUser": "openwork_core.session.compaction.errors",
    "ReminderInvalid": "openwork_core.session.compaction.errors",
    "RewindRejected": "openwork_core.session.compaction.errors",
    "RuntimeStateInvalid": "openwork_core.session.compaction.errors",
    "SUMMARY_INSTRUCTION": "openwork_core.session.compaction.summary",
    "SUMMARY_PREFIX": "openwork_core.session.compaction.compacted_view",
    "StoredPlan": "openwork_core.session.compaction.runtime_state",
    "SummaryAttempt": "openwork_core.session.compaction.generation",
    "SummaryFailureClass": "openwork_core.session.compaction.generation",
    "SummaryInvalid": "openwork_core.session.compaction.errors",
    "SummaryOutcome": "openwork_core.session.compaction.generation",
    "SummaryRetriesExhausted": "openwork_core.session.compaction.errors",
    "SummarySettings": "openwork_core.session.compaction.generation",
    "TranscriptPage": "openwork_core.storage.compaction_records",
    "advance_prune_watermark": "openwork_core.session.compaction.prune_step",
    "build_compacted_items": "openwork_core.session.compaction.compacted_view",
    "build_summary_request": "openwork_core.session.compaction.summary",
    "collect_runtime_state": "openwork_core.session.compaction.runtime_state",
    "compaction_ineffective": "openwork_core.session.compaction.policy",
    "generate_summary": "openwork_core.session.compaction.generation",
    "ineffective_compaction_error": "openwork_core.session.compaction.policy",
    "is_real_user_request": "openwork_core.session.compaction.compacted_view",
    "last_real_user": "openwork_core.session.compaction.compacted_view",
    "load_conversation_items": "openwork_core.session.compaction.loading",
    "overflow_due": "openwork_core.session.compaction.policy",
    "render_reminder": "openwork_core.session.compaction.reminder",
    "rewind": "openwork_core.session.compaction.run",
    "run_compaction": "openwork_core.session.compaction.run",
    "threshold_due": "openwork_core.session.compaction.policy",
    "SUMMARY_FLOOR_TOKENS": "openwork_core.session.compaction.policy",
    "ThresholdDecision": "openwork_core.session.compaction.policy",
    "compaction_floor": "openwork_core.session.compaction.policy",
    "overflow_can_compact": "openwork_core.session.compaction.policy",
    "threshold_decision": "openwork_core.session.compaction.policy",
    "validate_summary": "openwork_core.session.compaction.summary",
}
"""Each public name's module: nothing is imported until a name is used."""

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

if not TYPE_CHECKING:  # for mypy the names are the imports above: a misspelt one is an error
    __getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
