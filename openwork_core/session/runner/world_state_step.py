"""TurnRunner.sample_world_state (context-window.md §3): capture → render_diff against the
in-memory baseline (read-only) → persist one message per changed section (deterministic ids, so
a rewrite is a no-op) → append to Chat State → advance the baseline. Any failure leaves the
baseline where it was, so the next sampling produces the same messages again."""

from __future__ import annotations

from collections.abc import Callable

import structlog

from openwork_chat_state.actor import ChatStateHandle
from openwork_chat_state.item import MessageKind
from openwork_chat_state.messages import user_text
from openwork_core.context.world_state.capture import WorldStateSources, capture_world_state
from openwork_core.context.world_state.diff import RetainedSections, WorldStateBaseline, render_diff
from openwork_core.context.world_state.errors import WorldStateError
from openwork_core.context.world_state.ids import world_state_message_id
from openwork_core.ids import TurnId
from openwork_core.session.outcome import TurnFailure
from openwork_core.session.runner.guards import in_chat_state, persisted
from openwork_core.session.storage import (
    OutgoingMessage,
    SessionStorage,
    StepWrite,
    committed_all,
)
from openwork_tools.faults import faultpoint

log = structlog.get_logger(__name__)


class WorldStateTracker:
    """Owned by the session actor: the baseline lives as long as the actor (lost on restart)."""

    def __init__(self) -> None:
        self.baseline = WorldStateBaseline.empty()


class WorldStateStep:
    """One session's sampling for one turn (the sources' disabled-skill set is the turn's)."""

    def __init__(
        self,
        *,
        storage: SessionStorage,
        chat: ChatStateHandle,
        tracker: WorldStateTracker,
        sources: Callable[[], WorldStateSources],
    ) -> None:
        self._storage = storage
        self._chat = chat
        self._tracker = tracker
        self._sources = sources

    async def sample(self, turn_id: TurnId, model_call: int, sample_seq: int) -> None:
        try:
            capture = await capture_world_state(self._sources())
        except WorldStateError as error:
            raise TurnFailure(error.code, str(error)) from error
        view = await in_chat_state(self._chat.context_view())
        baseline = self._tracker.baseline
        updates = render_diff(baseline, capture, RetainedSections.scan(view.items))
        if updates:
            rows = [
                OutgoingMessage(
                    id=world_state_message_id(turn_id, model_call, sample_seq, u.section_id),
                    message=user_text(u.text),
                    kind=MessageKind.WORLD_STATE,
                )
                for u in updates
            ]
            origins = await persisted(
                self._storage.append(turn_id, StepWrite(messages=tuple(rows))), "World State"
            )
            faultpoint("world_state_row_committed")
            await in_chat_state(self._chat.append_all(committed_all(rows, origins)))
            log.info(
                "world_state.sampled",
                sections=[str(u.section_id) for u in updates],
                model_call=model_call,
                sample_seq=sample_seq,
            )
        self._tracker.baseline = baseline.advanced(capture)
