"""Automatic compaction inside a turn (compaction.md §1–§2, §7; context-window.md §7.2):
``threshold`` before a submission, ``overflow`` after an explicit context_overflow. Pruning comes
first and is not a compaction; a summary is at most one per logical model call; a failed
install sets reload_required; two ineffective automatic compactions in a row stop the loop."""

from __future__ import annotations

from contextlib import nullcontext

from openwork_core.context.builder import ResolvedSystemContext
from openwork_core.ids import SessionId
from openwork_core.plan.model import TurnPlan
from openwork_core.session.compaction.errors import CompactionError, CompactionInstallFailed
from openwork_core.session.compaction.policy import (
    INEFFECTIVE_COMPACTION_MESSAGE,
    compaction_ineffective,
)
from openwork_core.session.compaction.prune_step import advance_prune_watermark
from openwork_core.session.compaction.run import CompactionDeps, CompactionResult, run_compaction
from openwork_core.session.outcome import FailureCode, TurnCancelled, TurnFailure
from openwork_core.session.runner.cancellation import TurnCancellation
from openwork_core.session.runner.context import ResolvedModel, SessionServices, TurnContext
from openwork_core.session.updates import PhaseChanged, SessionPhase
from openwork_core.storage.compaction_records import CompactionKind
from openwork_core.storage.trace_records import SpanClosed, SpanKind, SpanStatus


def compaction_deps(
    session_id: SessionId,
    services: SessionServices,
    model: ResolvedModel,
    cancellation: TurnCancellation | None = None,
) -> CompactionDeps:
    """What one compaction of this session uses (in a turn, or manual / rewind on the actor);
    in a turn, the summary runs in the turn's cancellation scope (issue 24 point 3)."""
    return CompactionDeps(
        session_id=session_id,
        store=services.storage.compactions,
        chat=services.chat,
        engine=services.engine,
        port=model.port,
        model=model.model.name,
        capabilities=model.capabilities,
        spill_dir=None if services.spill_dir is None else str(services.spill_dir),
        summary=services.summary_settings,
        cancellable=nullcontext if cancellation is None else cancellation.scope,
    )


class CompactionStep:
    def __init__(self, turn: TurnContext) -> None:
        self._turn = turn

    async def prune(self) -> bool:
        """Advance the pruning watermark; any failure means "no pruning this time". A cancel
        asked for meanwhile ends the turn right after the pass (issue 24 point 3)."""
        services = self._turn.services
        spill = None if services.spill_dir is None else str(services.spill_dir)
        pruned = await advance_prune_watermark(
            services.storage.compactions, services.chat, self._turn.spec.session_id, spill
        )
        self._turn.cancellation.check()
        return pruned

    async def summarize(
        self,
        kind: CompactionKind,
        system: ResolvedSystemContext,
        plan: TurnPlan | None,
        model: ResolvedModel,
    ) -> CompactionResult:
        """One automatic summary compaction by ``model`` (the turn's current one, issue 26
        point 4); failures end the turn with compaction_error."""
        turn = self._turn
        services = turn.services
        history = services.compaction_history
        if compaction_ineffective(history.automatic):
            raise TurnFailure(FailureCode.COMPACTION_ERROR, INEFFECTIVE_COMPACTION_MESSAGE)
        turn.emit(PhaseChanged(phase=SessionPhase.COMPACTING))
        span = services.trace.open_span(
            kind=SpanKind.COMPACTION,
            name=f"{kind.value} compaction",
            trace_id=turn.spec.turn_id,
            session_id=turn.spec.session_id,
            turn_id=turn.spec.turn_id,
        )
        try:
            result = await run_compaction(
                compaction_deps(turn.spec.session_id, services, model, turn.cancellation),
                kind,
                turn.spec.turn_id,
                plan,
                system,
            )
        except CompactionInstallFailed as error:
            history.reload_required = True
            services.trace.close_span(
                SpanClosed(span_id=span, status=SpanStatus.FAILED, error_code=error.code)
            )
            raise TurnFailure(FailureCode.COMPACTION_ERROR, f"{error.code}: {error}") from error
        except CompactionError as error:
            services.trace.close_span(
                SpanClosed(
                    span_id=span,
                    status=SpanStatus.FAILED,
                    error_code=error.code,
                    error_message=str(error)[:1000],
                )
            )
            raise TurnFailure(FailureCode.COMPACTION_ERROR, f"{error.code}: {error}") from error
        except TurnCancelled:
            services.trace.close_span(SpanClosed(span_id=span, status=SpanStatus.CANCELLED))
            raise
        history.record(result)
        services.trace.close_span(
            SpanClosed(
                span_id=span,
                status=SpanStatus.SUCCEEDED,
                attributes={
                    "checkpointId": result.compaction_id,
                    "kind": kind.value,
                    "conversationTokensBefore": result.before_tokens,
                    "conversationTokensAfter": result.after_tokens,
                    "summaryAttempts": len(result.attempts),
                    "prepareMs": result.timings.prepare_ms,
                    "summaryMs": result.timings.summary_ms,
                    "persistenceMs": result.timings.persistence_ms,
                    "installMs": result.timings.install_ms,
                },
            )
        )
        turn.emit(PhaseChanged(phase=SessionPhase.RUNNING_MODEL))
        return result
