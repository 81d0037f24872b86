"""``run_compaction`` and ``rewind`` (compaction.md §7, §8.3).

Order: (1) read the Chat State projection and measure ``conversationTokensBefore``; (2) find the
last real user request; (3) read all raw messages, collect the runtime state on top of the latest
checkpoint, render the reminder; (4) the System Context is the caller's (the Turn's, or for a
manual compaction the Agent system prompt alone); (5) call the summary model and validate;
(6) validate and write the checkpoint in one transaction; (7) build the replacement items and
measure ``conversationTokensAfter``; (8) replace the Chat State items atomically.

A failure in 1–6 writes nothing and leaves Chat State unchanged (a ``CompactionError``). A failure
in 8 raises ``CompactionInstallFailed``: the checkpoint stays committed and the caller sets
``reload_required``. ``rewind`` makes no model call: it reuses its target's replay, summary and
usage, re-derives the runtime state, and hides the abandoned tail without deleting it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field

import structlog

from openwork_chat_state.actor import ChatStateHandle
from openwork_chat_state.item import ConversationItem, RealOrigin
from openwork_chat_state.messages import Message
from openwork_chat_state.view import ConversationContextView
from openwork_core.context.builder import ResolvedSystemContext
from openwork_core.context.engine import ContextEngine
from openwork_core.ids import CompactionId, SessionId, TurnId, new_compaction_id
from openwork_core.models.capabilities import ModelCapabilities
from openwork_core.models.port import ModelPort
from openwork_core.plan.model import TurnPlan
from openwork_core.session.compaction.compacted_view import (
    ReplayAnchor,
    build_compacted_items,
    last_real_user,
    replay_anchor,
)
from openwork_core.session.compaction.errors import (
    CheckpointRejected,
    CompactionError,
    CompactionInstallFailed,
    CompactionStepFailed,
    MissingLastUser,
    RewindRejected,
)
from openwork_core.session.compaction.generation import (
    SummaryAttempt,
    SummarySettings,
    generate_summary,
)
from openwork_core.session.compaction.reminder import render_reminder, validate_reminder
from openwork_core.session.compaction.runtime_state import (
    CompactionRuntimeState,
    collect_runtime_state,
)
from openwork_core.session.compaction.summary import build_summary_request, validate_summary_text
from openwork_core.session.storage import CompactionStorage
from openwork_core.storage.codec import decode_message
from openwork_core.storage.compaction_records import (
    SUMMARY_FORMAT_VERSION,
    CheckpointRecord,
    CompactionKind,
    NewCheckpoint,
)
from openwork_core.storage.errors import WRITE_FAILURES, RecordNotFound
from openwork_tools.faults import faultpoint

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionDeps:
    """What one session's compactions use (owned by the session actor)."""

    session_id: SessionId
    store: CompactionStorage
    chat: ChatStateHandle
    engine: ContextEngine
    port: ModelPort
    model: str
    """The resolved model name (sent in the request, stored on the checkpoint)."""
    capabilities: ModelCapabilities
    spill_dir: str | None = None
    summary: SummarySettings = field(default_factory=SummarySettings)
    cancellable: Callable[[], AbstractAsyncContextManager[object]] = nullcontext
    """The turn's cancellation scope around the summary's model calls and pauses (issue 24
    point 3: a cancel ends the summary at once and closes its HTTP stream); nothing is written
    before the summary, so a cancelled compaction leaves no trace."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionTimings:
    """The §9 span durations: steps 1–4, step 5, step 6, steps 7–8."""

    prepare_ms: int = 0
    summary_ms: int = 0
    persistence_ms: int = 0
    install_ms: int = 0


class _Laps:
    def __init__(self) -> None:
        self._last = time.monotonic()
        self._ms: dict[str, int] = {}

    def lap(self, name: str) -> None:
        now = time.monotonic()
        self._ms[name] = round((now - self._last) * 1000)
        self._last = now

    def timings(self) -> CompactionTimings:
        return CompactionTimings(**self._ms)


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionResult:
    """``before_tokens``/``after_tokens``: the Conversation region of the request copy before
    and after (the span's ``conversationTokensBefore``/``After``; the loop breaker's input)."""

    compaction_id: CompactionId
    before_tokens: int
    after_tokens: int
    kind: CompactionKind
    checkpoint: CheckpointRecord
    attempts: tuple[SummaryAttempt, ...] = ()
    timings: CompactionTimings = field(default_factory=CompactionTimings)


@contextmanager
def _step(name: str) -> Iterator[None]:
    """Steps 1–5: anything that is not already a ``CompactionError`` becomes one."""
    try:
        yield
    except CompactionError:
        raise
    except Exception as exc:
        raise CompactionStepFailed(f"compaction step {name!r} failed: {exc}") from exc


def _conversation_tokens(
    deps: CompactionDeps, system: ResolvedSystemContext, view: ConversationContextView
) -> int:
    """The Conversation region of the request copy (context-window.md §7.1)."""
    prepared = deps.engine.prepare(
        model=deps.model,
        capabilities=deps.capabilities,
        system=system,
        view=view,
        tools=(),
        spill_dir=deps.spill_dir,
    )
    return prepared.budget.conversation_tokens


async def _runtime_state(
    deps: CompactionDeps, plan: TurnPlan | None
) -> tuple[CompactionRuntimeState, str, int]:
    """(state, reminder, current max message sequence)."""
    contents = await deps.store.all_session_message_contents(deps.session_id)
    latest = await deps.store.latest_checkpoint(deps.session_id)
    previous = None if latest is None else CompactionRuntimeState.from_json(latest.runtime_state)
    state = collect_runtime_state(previous, contents.contents, plan)
    return state, render_reminder(state), contents.max_sequence


async def _write(deps: CompactionDeps, new: NewCheckpoint) -> CheckpointRecord:
    """Step 6: re-check the texts, then the transactional §6 checks and insert."""
    validate_summary_text(new.summary)
    validate_reminder(new.runtime_reminder)
    try:
        record = await deps.store.insert_checkpoint(new)
    except WRITE_FAILURES as exc:  # refused, or the database went away: nothing was installed
        raise CheckpointRejected(f"checkpoint not written: {exc}") from exc
    faultpoint("checkpoint_committed")
    return record


def _after_boundary(
    items: Sequence[ConversationItem], checkpoint: CheckpointRecord
) -> tuple[ConversationItem, ...]:
    boundary = checkpoint.replaced_through_message_sequence
    return tuple(
        i for i in items if isinstance(i.origin, RealOrigin) and i.origin.sequence > boundary
    )


async def _install(
    deps: CompactionDeps,
    system: ResolvedSystemContext,
    checkpoint: CheckpointRecord,
    replayed: Message,
    raw_after: tuple[ConversationItem, ...],
    watermark: int | None,
) -> int:
    """Steps 7–8 after the commit: build the items, measure them, replace Chat State. Any
    failure here is ``CompactionInstallFailed`` (the checkpoint is not rolled back)."""
    try:
        items = build_compacted_items(checkpoint, replayed, raw_after)
        after = _conversation_tokens(deps, system, ConversationContextView(items, watermark))
        await deps.chat.replace_items(items)
    except Exception as exc:
        log.error("compaction.install_failed", compaction_id=checkpoint.id, error=str(exc))
        raise CompactionInstallFailed(checkpoint.id, str(exc)) from exc
    return after


async def run_compaction(
    deps: CompactionDeps,
    kind: CompactionKind,
    trigger_turn_id: TurnId | None,
    plan: TurnPlan | None,
    system: ResolvedSystemContext,
) -> CompactionResult:
    """Summarise the current Conversation and install the compacted view (§7)."""
    if kind is CompactionKind.REWIND:
        raise ValueError("a rewind goes through rewind(), not run_compaction()")
    if (kind is not CompactionKind.MANUAL) != (trigger_turn_id is not None):
        raise ValueError("threshold and overflow compactions, and only they, name a trigger turn")
    compaction_id = new_compaction_id()
    laps = _Laps()
    with _step("read projection"):
        view = await deps.chat.context_view()
        before = _conversation_tokens(deps, system, view)
    last = last_real_user(view.items)
    if last is None:
        raise MissingLastUser()
    anchor = replay_anchor(last)
    with _step("runtime state"):
        state, reminder, max_sequence = await _runtime_state(deps, plan)
    with _step("summary request"):
        request = build_summary_request(
            deps.engine, deps.model, deps.capabilities, system, view, deps.spill_dir
        )
    laps.lap("prepare_ms")
    async with deps.cancellable():
        outcome = await generate_summary(
            deps.port,
            request,
            session_id=deps.session_id,
            compaction_id=compaction_id,
            settings=deps.summary,
        )
    laps.lap("summary_ms")
    usage = outcome.response.usage
    checkpoint = await _write(
        deps,
        NewCheckpoint(
            id=compaction_id,
            session_id=deps.session_id,
            kind=kind,
            source_message_count=len(view.items),
            last_user_message_id=anchor.message_id,
            last_user_message_sequence=anchor.sequence,
            resolved_model_name=deps.model,
            summary=outcome.summary,
            runtime_state=state.to_json(),
            runtime_reminder=reminder,
            trigger_turn_id=trigger_turn_id,
            expected_max_sequence=max_sequence,
            input_tokens=usage.input_tokens if usage else None,
            output_tokens=usage.output_tokens if usage else None,
        ),
    )
    laps.lap("persistence_ms")
    after = await _install(
        deps,
        system,
        checkpoint,
        last.message,
        _after_boundary(view.items, checkpoint),
        view.tool_result_pruned_through_sequence,
    )
    laps.lap("install_ms")
    log.info(
        "compaction.finished",
        compaction_id=checkpoint.id,
        kind=kind.value,
        before_tokens=before,
        after_tokens=after,
        attempts=len(outcome.attempts),
    )
    return CompactionResult(
        compaction_id=checkpoint.id,
        before_tokens=before,
        after_tokens=after,
        kind=kind,
        checkpoint=checkpoint,
        attempts=outcome.attempts,
        timings=laps.timings(),
    )


async def _rewind_target(
    deps: CompactionDeps, target_compaction_id: CompactionId
) -> tuple[CheckpointRecord, ReplayAnchor]:
    try:
        target = await deps.store.get_checkpoint(deps.session_id, target_compaction_id)
    except RecordNotFound as exc:
        raise RewindRejected(str(exc)) from exc
    if target.summary_format_version != SUMMARY_FORMAT_VERSION:
        raise RewindRejected(f"checkpoint {target.id} has an unsupported summary format")
    if target.last_user_message_id is None or target.last_user_message_sequence is None:
        raise RewindRejected(f"checkpoint {target.id} has no replay anchor")
    anchor = ReplayAnchor(
        message_id=target.last_user_message_id, sequence=target.last_user_message_sequence
    )
    return target, anchor


async def rewind(
    deps: CompactionDeps, target_compaction_id: CompactionId, system: ResolvedSystemContext
) -> CompactionResult:
    """Install the projection of a past checkpoint as a new ``rewind`` checkpoint (§8.3)."""
    laps = _Laps()
    with _step("read projection"):
        view = await deps.chat.context_view()
        before = _conversation_tokens(deps, system, view)
        target, anchor = await _rewind_target(deps, target_compaction_id)
        replayed = await deps.store.replayed_message(target)
        if replayed is None:
            raise RewindRejected(f"checkpoint {target.id} lost its replayed message")
        state, reminder, max_sequence = await _runtime_state(deps, None)
    laps.lap("prepare_ms")
    checkpoint = await _write(
        deps,
        NewCheckpoint(
            id=new_compaction_id(),
            session_id=deps.session_id,
            kind=CompactionKind.REWIND,
            source_message_count=target.source_message_count,
            last_user_message_id=anchor.message_id,
            last_user_message_sequence=anchor.sequence,
            resolved_model_name=target.resolved_model_name,
            summary=target.summary,
            runtime_state=state.to_json(),
            runtime_reminder=reminder,
            parent_compaction_id=target.id,
            rewind_through_message_sequence=target.through_message_sequence,
            expected_max_sequence=max_sequence,
            input_tokens=target.input_tokens,
            output_tokens=target.output_tokens,
        ),
    )
    laps.lap("persistence_ms")
    after = await _install(
        deps,
        system,
        checkpoint,
        decode_message(replayed),
        (),
        view.tool_result_pruned_through_sequence,
    )
    laps.lap("install_ms")
    log.info("compaction.rewound", compaction_id=checkpoint.id, target=target.id)
    return CompactionResult(
        compaction_id=checkpoint.id,
        before_tokens=before,
        after_tokens=after,
        kind=CompactionKind.REWIND,
        checkpoint=checkpoint,
        timings=laps.timings(),
    )
