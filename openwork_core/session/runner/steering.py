"""Steering a running Turn (issue 26 point 1; docs/architecture.md "Steering is input to the
running turn, not a new turn").

A steer is accepted by the session actor: its row (``turn_steers``, with the user messages it
carries) commits before the 202, then it waits in the turn's ``SteerInbox``. The runner takes
what waits at its next model-call boundary — after every tool result of the step in progress,
never during a stream — and writes it as user messages of the turn (``deliver``). After a final
answer the runner takes its last look (``SteerInbox.last_look``): a steer waiting, or still being
committed, is carried by one more model call; with none, the inbox closes in the same step, so a
later steer is refused ``turn_not_active`` (the client sends it as the next turn) instead of being
accepted by a turn that will not answer it. When the runner ends otherwise (cancelled, failed,
its model-call limit) it closes the inbox and writes what still waited (cancel discards nothing
committed); a steer that reaches a closed inbox is written by the actor itself."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import structlog

from openwork_chat_state.actor import ChatStateHandle
from openwork_chat_state.messages import TextBlock
from openwork_core.ids import ClientRequestId, SteerId, TurnId, new_message_id, new_steer_id
from openwork_core.session.errors import TurnNotActive
from openwork_core.session.input import PreparedTurnInput
from openwork_core.session.runner.guards import in_chat_state, persisted
from openwork_core.session.storage import (
    OutgoingMessage,
    SessionStorage,
    StepWrite,
    committed_all,
)
from openwork_core.session.updates import SessionUpdate, TurnSteered

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class SteerAccepted:
    """What a steer answers (the 202's ids)."""

    turn_id: TurnId
    steer_id: SteerId


@dataclass(frozen=True, slots=True, kw_only=True)
class Steer:
    """One accepted steer: the user messages it adds to its turn, in order (skill snapshots,
    then the visible message, as a turn's input)."""

    accepted: SteerAccepted
    client_request_id: ClientRequestId
    messages: tuple[OutgoingMessage, ...]
    text: str
    """The visible message's text, for the update that announces it."""


def steer_of(
    turn_id: TurnId, client_request_id: ClientRequestId, prepared: PreparedTurnInput
) -> Steer:
    """A new steer of ``turn_id`` carrying ``prepared``'s messages under fresh ids."""
    messages = tuple(
        OutgoingMessage(id=new_message_id(), message=m.message, kind=m.kind)
        for m in prepared.messages
    )
    visible = prepared.messages[-1].message
    text = "".join(b.text for b in visible.content if isinstance(b, TextBlock))
    return Steer(
        accepted=SteerAccepted(turn_id, new_steer_id()),
        client_request_id=client_request_id,
        messages=messages,
        text=text,
    )


class SteerStore(Protocol):
    """The durable side of steering: one row per steer, unique per session and client request."""

    async def find(self, client_request_id: ClientRequestId) -> SteerAccepted | None:
        """The steer accepted under ``client_request_id``, if any (idempotency)."""
        ...

    async def record(self, steer: Steer) -> SteerAccepted:
        """Commit the steer's row; one already stored under its client request id is kept and
        its ids returned."""
        ...

    async def stranded(self) -> tuple[Steer, ...]:
        """Committed steers of ended turns whose messages were never written."""
        ...


async def write_stranded(store: SteerStore, storage: SessionStorage) -> None:
    """At a session's load, before its Conversation is read: the steers a turn that died with
    its daemon never took join the Conversation at its end (acknowledged = durable); the
    request's pairing gives any call left unanswered its ``interrupted`` result before them."""
    stranded = await store.stranded()
    for steer in stranded:
        await storage.append(steer.accepted.turn_id, StepWrite(messages=steer.messages))
    if stranded:
        log.info("turn.stranded_steers_written", steers=len(stranded))


@dataclass(slots=True)
class SteerInbox:
    """The steers of one running turn that the runner has not taken yet (actor memory; each
    is already committed), and how many the actor is committing now."""

    _waiting: list[Steer] = field(default_factory=list)
    _committing: int = 0
    _settled: asyncio.Event = field(default_factory=asyncio.Event)
    closed: bool = False
    """The runner took its last look: a steer put now is the actor's to write."""

    def begin(self) -> None:
        """The actor starts committing a steer of this turn; ``settle`` follows, however the
        commit ends (after ``put`` when it added one)."""
        self._committing += 1
        self._settled.clear()

    def put(self, steer: Steer) -> bool:
        """Queue the committed ``steer``; False when the runner will not take it any more."""
        self._waiting.append(steer)
        return not self.closed

    def settle(self) -> None:
        self._committing -= 1
        if not self._committing:
            self._settled.set()

    async def last_look(self) -> bool:
        """After a final answer: True when a steer waits, once every steer being committed has
        settled (one more model call carries it); else the inbox closes in this same step."""
        while self._committing:
            await self._settled.wait()
        if self._waiting:
            return True
        self.closed = True
        return False

    def take(self) -> tuple[Steer, ...]:
        taken, self._waiting = tuple(self._waiting), []
        return taken

    def close(self) -> tuple[Steer, ...]:
        self.closed = True
        return self.take()


async def write_steers(
    storage: SessionStorage, chat: ChatStateHandle, turn_id: TurnId, steers: tuple[Steer, ...]
) -> None:
    """The steers' messages as user messages of the turn, then into Chat State (persist, then
    advance); a failure is the turn's ``persistence_error`` / ``chat_state_error``."""
    rows = [m for s in steers for m in s.messages]
    origins = await persisted(
        storage.append(turn_id, StepWrite(messages=tuple(rows))), "the turn's steering"
    )
    await in_chat_state(chat.append_all(committed_all(rows, origins)))
    log.info("turn.steered", turn_id=turn_id, steers=len(steers), messages=len(rows))


class SteerDelivery:
    """The runner's side: what waits joins the Conversation at a model-call boundary."""

    def __init__(
        self, inbox: SteerInbox, storage: SessionStorage, chat: ChatStateHandle, turn_id: TurnId
    ) -> None:
        self._inbox = inbox
        self._storage = storage
        self._chat = chat
        self._turn_id = turn_id

    async def last_look(self) -> bool:
        """After a final answer: whether a steer makes one more model call (``SteerInbox``)."""
        return await self._inbox.last_look()

    async def deliver(self) -> None:
        steers = self._inbox.take()
        if steers:
            await write_steers(self._storage, self._chat, self._turn_id, steers)

    async def close(self) -> None:
        """The turn ends: write what still waited; a failure is logged (the outcome stands,
        the rows stay in ``turn_steers``)."""
        steers = self._inbox.close()
        if not steers:
            return
        try:
            await write_steers(self._storage, self._chat, self._turn_id, steers)
        except Exception as exc:
            log.error("turn.steer_write_failed", turn_id=self._turn_id, error=repr(exc))


@dataclass(frozen=True, slots=True, kw_only=True)
class SteerTarget:
    """The actor's running turn as a steer sees it."""

    turn_id: TurnId
    inbox: SteerInbox


async def accept_steer(
    store: SteerStore,
    storage: SessionStorage,
    chat: ChatStateHandle,
    steer: Steer,
    running: SteerTarget | None,
    emit: Callable[[SessionUpdate], None],
) -> SteerAccepted:
    """Idempotent by client request id (a retry after the turn ended gets the same ids); else
    the addressed turn must be running and still taking steers (``TurnNotActive`` names the
    running one). Committed, announced, then handed to the runner — or, when the runner closed
    its inbox meanwhile, written here."""
    known = await store.find(steer.client_request_id)
    if known is not None:
        return known
    turn_id = steer.accepted.turn_id
    if running is None or running.turn_id != turn_id or running.inbox.closed:
        live = None if running is None or running.inbox.closed else running.turn_id
        raise TurnNotActive(turn_id, live)
    running.inbox.begin()  # the runner's last look now waits for this commit
    try:
        accepted = await store.record(steer)
        if accepted != steer.accepted:  # a retry's twin was stored first
            return accepted
        emit(
            TurnSteered(
                steer_id=accepted.steer_id,
                client_request_id=steer.client_request_id,
                text=steer.text,
            )
        )
        taken = running.inbox.put(steer)
    finally:
        running.inbox.settle()  # however the commit went: the last look never waits forever
    if not taken:
        await SteerDelivery(running.inbox, storage, chat, turn_id).close()
    return accepted
