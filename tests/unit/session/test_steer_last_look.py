"""A steer is never accepted by a turn that will not answer it (issue 26 point 1; docs/api.md
``POST …/steer``): after a final answer the runner takes its last look at the turn's steers; one
the actor is still committing then is waited for and carried by one more model call, and once
the look found none, the next steer is refused ``turn_not_active`` (the client sends it as the
next turn). Before, a steer committed between the runner's look and the turn's end got its 202
and was written after the final answer with no model call to read it: `openwork chat` showed
"steering: …" and the question stayed unanswered (CI, 2026-12-05:
``test_chat_without_a_message_is_a_prompt_with_history``)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from openwork_chat_state.messages import user_text
from openwork_core.ids import ClientRequestId, TurnId
from openwork_core.session.errors import TurnNotActive
from openwork_core.session.input import PreparedTurnInput, input_message
from openwork_core.session.runner.steering import (
    Steer,
    SteerAccepted,
    SteerInbox,
    SteerTarget,
    accept_steer,
    steer_of,
)
from openwork_core.session.updates import SessionUpdate
from openwork_core.storage.memory_steers import InMemorySteers

TURN = TurnId("turn_1")
UNUSED = cast(Any, None)
"""The storage and Chat State a steer needs only when the actor writes it itself."""


class GatedSteers(InMemorySteers):
    """Commits a steer only once the test opens the gate."""

    def __init__(self, *, fail: bool = False) -> None:
        super().__init__()
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()
        self.fail = fail

    async def record(self, steer: Steer) -> SteerAccepted:
        self.entered.set()
        await self.gate.wait()
        if self.fail:
            raise ConnectionError("the database went away")
        return await super().record(steer)


def a_steer(text: str, request: str) -> Steer:
    prepared = PreparedTurnInput(messages=(input_message(user_text(text)),))
    return steer_of(TURN, ClientRequestId(request), prepared)


async def accept(store: InMemorySteers, inbox: SteerInbox, steer: Steer) -> SteerAccepted:
    announced: list[SessionUpdate] = []
    return await accept_steer(
        store, UNUSED, UNUSED, steer, SteerTarget(turn_id=TURN, inbox=inbox), announced.append
    )


async def test_a_steer_being_committed_at_the_final_answer_makes_one_more_model_call() -> None:
    store, inbox = GatedSteers(), SteerInbox()
    steer = a_steer("and make it rhyme", "steer-1")
    accepting = asyncio.create_task(accept(store, inbox, steer))
    async with asyncio.timeout(5):
        await store.entered.wait()  # the actor is committing it: the final answer ends now
        looking = asyncio.create_task(inbox.last_look())
        store.gate.set()
        assert await looking is True
        assert await accepting == steer.accepted
    assert not inbox.closed
    assert inbox.take() == (steer,)


async def test_with_no_steer_the_last_look_closes_and_a_later_steer_is_refused() -> None:
    store, inbox = InMemorySteers(), SteerInbox()
    assert await inbox.last_look() is False
    assert inbox.closed
    with pytest.raises(TurnNotActive):
        await accept(store, inbox, a_steer("one more thing", "steer-late"))
    assert store.steers == {}


async def test_a_commit_that_fails_does_not_hold_the_last_look() -> None:
    store, inbox = GatedSteers(fail=True), SteerInbox()
    accepting = asyncio.create_task(accept(store, inbox, a_steer("lost?", "steer-2")))
    async with asyncio.timeout(5):
        await store.entered.wait()
        looking = asyncio.create_task(inbox.last_look())
        store.gate.set()
        with pytest.raises(ConnectionError):
            await accepting
        assert await looking is False
    assert inbox.closed
