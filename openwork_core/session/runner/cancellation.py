"""Racing a step against the turn's cancel signal."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any, TypeVar

from openwork_core.session.outcome import TurnCancelled

T = TypeVar("T")


async def until_cancelled(cancel: asyncio.Event, step: Coroutine[Any, Any, T]) -> T:
    """Run ``step``; if ``cancel`` fires first, cancel the step, await it, raise TurnCancelled."""
    if cancel.is_set():
        step.close()
        raise TurnCancelled()
    task = asyncio.ensure_future(step)
    waiter = asyncio.ensure_future(cancel.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        waiter.cancel()
        raise
    if task.done():
        waiter.cancel()
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    raise TurnCancelled()
