"""Reverting a turn and every later one, and putting the last revert back (issue 26 point 3):
an idle-only user action, run on the session's actor.

A revert is recorded first (the turns are hidden from then on, their rows and messages kept),
then each file change of those turns not undone yet is undone on its own, latest first — a change
the file no longer matches is reported with its code, as undo reports it, and the others still go
— then the Conversation is loaded again without the hidden turns and the World State baseline is
dropped (the restart-replay rules: the next sample compares against what the history carries)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import structlog

from openwork_chat_state.error_root import OpenWorkError
from openwork_core.context.world_state.diff import WorldStateBaseline
from openwork_core.ids import SessionId, TurnId
from openwork_core.session.compaction.loading import load_conversation_items
from openwork_core.session.file_changes import apply_recorded_changes
from openwork_core.session.runner.context import SessionServices
from openwork_core.storage.revert_records import ActiveRevert, RevertPlan
from openwork_tools.modes import SandboxMode
from openwork_tools.results import FileChange
from openwork_tools.undo import ChangeDirection

log = structlog.get_logger(__name__)


class RevertStore(Protocol):
    async def hidden(self) -> frozenset[TurnId]: ...

    async def plan(self, turn_id: TurnId) -> RevertPlan: ...

    async def record(self, revert_id: str, plan: RevertPlan) -> None: ...

    async def set_undone(self, revert_id: str, change_ids: Sequence[str]) -> None: ...

    async def last_active(self) -> ActiveRevert: ...

    async def unrevert(self, revert_id: str) -> None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangeRefusal:
    change_id: str
    code: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RevertResult:
    turn_ids: tuple[TurnId, ...]
    """The turns hidden (a revert) or back (an unrevert), in order."""
    changes: tuple[FileChange, ...]
    conflicts: tuple[ChangeRefusal, ...]


async def revert_turns(
    session_id: SessionId,
    services: SessionServices,
    mode: SandboxMode,
    store: RevertStore,
    turn_id: TurnId,
) -> RevertResult:
    plan = await store.plan(turn_id)
    revert_id = f"revert_{uuid.uuid4().hex}"
    await store.record(revert_id, plan)
    changes, conflicts = await _each(
        session_id, services, mode, tuple(reversed(plan.change_ids)), ChangeDirection.UNDO
    )
    await store.set_undone(revert_id, [c.change_id for c in changes])
    await _reload(session_id, services)
    log.info("turns.reverted", turns=len(plan.turn_ids), undone=len(changes))
    return RevertResult(turn_ids=plan.turn_ids, changes=changes, conflicts=conflicts)


async def unrevert(
    session_id: SessionId, services: SessionServices, mode: SandboxMode, store: RevertStore
) -> RevertResult:
    active = await store.last_active()
    await store.unrevert(active.revert_id)
    changes, conflicts = await _each(
        session_id, services, mode, tuple(reversed(active.change_ids)), ChangeDirection.REAPPLY
    )
    await _reload(session_id, services)
    log.info("turns.unreverted", turns=len(active.turn_ids), reapplied=len(changes))
    return RevertResult(turn_ids=active.turn_ids, changes=changes, conflicts=conflicts)


async def _each(
    session_id: SessionId,
    services: SessionServices,
    mode: SandboxMode,
    change_ids: tuple[str, ...],
    direction: ChangeDirection,
) -> tuple[tuple[FileChange, ...], tuple[ChangeRefusal, ...]]:
    applied: list[FileChange] = []
    refused: list[ChangeRefusal] = []
    for change_id in change_ids:
        try:
            applied += await apply_recorded_changes(
                services.storage.file_changes,
                session_id,
                services.toolset.registry_tools.session,
                mode,
                (change_id,),
                direction,
            )
        except OpenWorkError as error:  # the change's own refusal, reported; the others go on
            refused.append(ChangeRefusal(change_id=change_id, code=error.code, message=str(error)))
    return tuple(applied), tuple(refused)


async def _reload(session_id: SessionId, services: SessionServices) -> None:
    loaded = await load_conversation_items(services.storage.compactions, session_id)
    await services.chat.load(loaded.items, loaded.watermark)
    services.world_state.baseline = WorldStateBaseline.empty()
