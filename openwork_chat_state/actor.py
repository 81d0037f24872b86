"""ChatStateActor: the only writer of the Conversation. Callers hold a ChatStateHandle whose
async methods put a frozen command with a reply future on a bounded queue; one loop owns the
ConversationState (DESIGN.md §4.2)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from openwork_chat_state.errors import ChatStateStopped
from openwork_chat_state.item import ConversationItem
from openwork_chat_state.state import ConversationState, Draft
from openwork_chat_state.view import ConversationContextView

T = TypeVar("T")

_QUEUE_CAPACITY = 64


@dataclass(frozen=True, slots=True)
class _Command(Generic[T]):
    run: Callable[[ConversationState], T]
    reply: asyncio.Future[T]


class ChatStateHandle:
    """Cheap to share; every method is one round trip to the actor loop."""

    def __init__(self, queue: asyncio.Queue[_Command[object] | None], task: asyncio.Task[None]):
        self._queue = queue
        self._task = task

    async def _call(self, run: Callable[[ConversationState], T]) -> T:
        if self._task.done():
            raise ChatStateStopped("chat state actor stopped")
        reply: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        await self._queue.put(_Command(run, reply))  # type: ignore[arg-type]
        return await reply

    async def load(self, items: Sequence[ConversationItem], watermark: int | None) -> None:
        await self._call(lambda s: s.load(items, watermark))

    async def append(self, item: ConversationItem) -> None:
        await self._call(lambda s: s.append(item))

    async def append_all(self, items: Sequence[ConversationItem]) -> None:
        await self._call(lambda s: s.append_all(items))

    async def replace_items(self, items: Sequence[ConversationItem]) -> None:
        await self._call(lambda s: s.replace_items(items))

    async def advance_watermark(self, sequence: int) -> None:
        await self._call(lambda s: s.advance_watermark(sequence))

    async def begin_draft(self) -> None:
        await self._call(lambda s: s.begin_draft())

    async def push_text_delta(self, delta: str) -> None:
        await self._call(lambda s: s.push_text_delta(delta))

    async def push_reasoning_delta(self, delta: str) -> None:
        await self._call(lambda s: s.push_reasoning_delta(delta))

    async def discard_draft(self) -> None:
        await self._call(lambda s: s.discard_draft())

    async def commit_draft(self, item: ConversationItem) -> None:
        await self._call(lambda s: s.commit_draft(item))

    async def draft(self) -> Draft | None:
        return await self._call(lambda s: s.draft)

    async def context_view(self) -> ConversationContextView:
        """Read afresh for every model call; never cached by callers."""
        return await self._call(lambda s: s.context_view())

    async def stop(self) -> None:
        if not self._task.done():
            await self._queue.put(None)
            await self._task


class ChatStateActor:
    @staticmethod
    def spawn(state: ConversationState | None = None) -> ChatStateHandle:
        queue: asyncio.Queue[_Command[object] | None] = asyncio.Queue(_QUEUE_CAPACITY)
        task = asyncio.get_running_loop().create_task(
            _run(state or ConversationState(), queue), name="chat-state"
        )
        return ChatStateHandle(queue, task)


async def _run(state: ConversationState, queue: asyncio.Queue[_Command[object] | None]) -> None:
    while True:
        command = await queue.get()
        if command is None:
            break
        if command.reply.cancelled():
            continue
        try:
            result = command.run(state)
        except Exception as exc:  # the caller gets the error; the actor keeps running
            command.reply.set_exception(exc)
        else:
            command.reply.set_result(result)
    # answer anything still queued so no caller waits forever
    while not queue.empty():
        pending = queue.get_nowait()
        if pending is not None and not pending.reply.done():
            pending.reply.set_exception(ChatStateStopped("chat state actor stopped"))
