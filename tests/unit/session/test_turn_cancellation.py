"""A turn's cancellation (session-runtime.md §2 CancelTurn, §4; DESIGN.md §4.6): a request inside
a cancellable step cancels the runner's task with ``Task.cancel`` and surfaces as
``TurnCancelled`` after the step's cleanup; outside a step it only marks the turn; any other
cancellation of the task (shutdown) propagates unchanged."""

from __future__ import annotations

import asyncio

import pytest

from openwork_core.session.outcome import TurnCancelled
from openwork_core.session.runner.cancellation import TurnCancellation


async def test_a_request_inside_a_step_cancels_it_after_its_cleanup_and_raises_turn_cancelled() -> (
    None
):
    cancellation = TurnCancellation()
    entered = asyncio.Event()
    cleaned: list[str] = []

    async def step() -> None:
        async with cancellation.scope():
            entered.set()
            try:
                await asyncio.Event().wait()
            finally:
                cleaned.append("stream closed")

    task = asyncio.ensure_future(step())
    async with asyncio.timeout(5):
        await entered.wait()
        cancellation.request()
        with pytest.raises(TurnCancelled):
            await task
    assert cleaned == ["stream closed"]
    assert cancellation.token.is_set()
    assert not task.cancelled()  # the task ended with TurnCancelled, its cancel count restored


async def test_a_request_between_steps_marks_the_turn_and_the_next_step_never_starts() -> None:
    cancellation = TurnCancellation()
    cancellation.request()
    cancellation.request()  # idempotent
    with pytest.raises(TurnCancelled):
        cancellation.check()
    started: list[str] = []
    with pytest.raises(TurnCancelled):
        async with cancellation.scope():
            started.append("step")
    assert started == []


async def test_a_shutdown_cancelling_the_task_propagates_as_cancellation() -> None:
    cancellation = TurnCancellation()
    entered = asyncio.Event()

    async def step() -> None:
        async with cancellation.scope():
            entered.set()
            await asyncio.Event().wait()

    task = asyncio.ensure_future(step())
    async with asyncio.timeout(5):
        await entered.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert not cancellation.requested


async def test_a_step_that_swallows_the_cancellation_still_ends_the_turn() -> None:
    cancellation = TurnCancellation()
    entered = asyncio.Event()

    async def stubborn() -> str:
        async with cancellation.scope():
            entered.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                return "ignored the cancel"
        return "not reached"

    task = asyncio.ensure_future(stubborn())
    async with asyncio.timeout(5):
        await entered.wait()
        cancellation.request()
        with pytest.raises(TurnCancelled):
            await task


async def test_a_step_that_finishes_normally_returns_its_value() -> None:
    cancellation = TurnCancellation()
    async with cancellation.scope():
        value = await asyncio.sleep(0, result=42)
    assert value == 42
