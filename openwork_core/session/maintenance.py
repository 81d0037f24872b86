"""A session's idle-only user actions (the actor refuses them while a turn or another compaction
runs): manual compaction and rewind (compaction.md §1, §7, §8.3), which the actor runs as its own
task, and undo / reapply of recorded file changes (tools.md §8)."""

from __future__ import annotations

from collections.abc import Awaitable

from openwork_core.ids import CompactionId, SessionId
from openwork_core.session.compaction.errors import CompactionInstallFailed
from openwork_core.session.compaction.run import CompactionResult, rewind, run_compaction
from openwork_core.session.file_changes import apply_recorded_changes
from openwork_core.session.runner.cancellation import TurnCancellation
from openwork_core.session.runner.compaction_step import compaction_deps
from openwork_core.session.runner.context import ResolvedModel, SessionServices
from openwork_core.session.runner.prepare import system_context
from openwork_core.storage.compaction_records import CompactionKind
from openwork_tools.modes import SandboxMode
from openwork_tools.results import FileChange
from openwork_tools.undo import ChangeDirection


async def _installing(
    services: SessionServices, work: Awaitable[CompactionResult]
) -> CompactionResult:
    """A checkpoint committed but not installed sets ``reload_required`` (compaction.md §7)."""
    try:
        return await work
    except CompactionInstallFailed:
        services.compaction_history.reload_required = True
        raise


async def manual_compaction(
    session_id: SessionId,
    services: SessionServices,
    model: ResolvedModel,
    cancellation: TurnCancellation,
) -> CompactionResult:
    """No pruning; the System Context is the agent prompt alone. The summary call runs in
    ``cancellation``'s scope: a stopping actor ends it (``TurnCancelled``)."""
    system = system_context(services, with_tools=False)
    deps = compaction_deps(session_id, services, model, cancellation)
    return await _installing(
        services, run_compaction(deps, CompactionKind.MANUAL, None, None, system)
    )


async def rewind_to(
    session_id: SessionId,
    services: SessionServices,
    compaction_id: CompactionId,
    model: ResolvedModel,
) -> CompactionResult:
    """Install an older checkpoint's projection as a new rewind checkpoint (§8.3)."""
    system = system_context(services, with_tools=False)
    deps = compaction_deps(session_id, services, model)
    return await _installing(services, rewind(deps, compaction_id, system))


async def undo_or_reapply(
    session_id: SessionId,
    services: SessionServices,
    mode: SandboxMode,
    change_ids: tuple[str, ...],
    direction: ChangeDirection,
) -> tuple[FileChange, ...]:
    return await apply_recorded_changes(
        services.storage.file_changes,
        session_id,
        services.toolset.registry_tools.session,
        mode,
        change_ids,
        direction,
    )
