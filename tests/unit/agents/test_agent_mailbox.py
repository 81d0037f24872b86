"""The per-session mailbox (multi-agent.md §5 wait_agent, §6; session-runtime.md §2, §4)."""

from __future__ import annotations

import asyncio

import pytest

from openwork_core.agents.mailbox import AgentMailbox
from openwork_core.agents.messages import AgentMessage, AgentMessageKind

SHORT_TIMEOUT_S = 0.01


def _msg(n: int, task: str = "scan") -> AgentMessage:
    return AgentMessage(
        id=f"agent-msg:c:t{n}:final_answer",
        task_name=task,
        kind=AgentMessageKind.FINAL_ANSWER,
        body=f"answer {n}",
    )


def test_drain_returns_delivered_messages_in_arrival_order_and_empties_the_mailbox() -> None:
    """§6: drained before a model call, in order; nothing is left behind."""
    mailbox = AgentMailbox()
    assert mailbox.deliver(_msg(1))
    assert mailbox.deliver(_msg(2))
    assert mailbox.pending == 2
    assert mailbox.drain() == (_msg(1), _msg(2))
    assert mailbox.drain() == ()
    assert mailbox.pending == 0


def test_a_message_whose_id_is_already_queued_is_dropped() -> None:
    """§6: a duplicate id is dropped."""
    mailbox = AgentMailbox()
    assert mailbox.deliver(_msg(1))
    duplicate = AgentMessage(
        id=_msg(1).id, task_name="scan", kind=AgentMessageKind.FINAL_ANSWER, body="other"
    )
    assert not mailbox.deliver(duplicate)
    assert mailbox.drain() == (_msg(1),)


def test_an_id_drained_earlier_is_accepted_again_so_reconciliation_can_resend_an_unpersisted_message() -> (
    None
):
    """§6, §8: the messages table (ON CONFLICT) is the durable dedupe; the mailbox only holds
    what is queued."""
    mailbox = AgentMailbox()
    mailbox.deliver(_msg(1))
    mailbox.drain()
    assert mailbox.deliver(_msg(1))
    assert mailbox.drain() == (_msg(1),)


async def test_wait_returns_true_at_once_when_a_message_is_already_queued() -> None:
    """§5: wait_agent returns at once if one is queued (even with a long timeout)."""
    mailbox = AgentMailbox()
    mailbox.deliver(_msg(1))
    assert await mailbox.wait(600.0) is True
    assert mailbox.pending == 1


async def test_wait_returns_true_when_a_message_arrives_while_waiting() -> None:
    """§5: waits for any message in this session's mailbox (not a specific child)."""
    mailbox = AgentMailbox()
    asyncio.get_running_loop().call_soon(mailbox.deliver, _msg(1, task="other_child"))
    assert await mailbox.wait(600.0) is True
    assert mailbox.drain() == (_msg(1, task="other_child"),)


async def test_wait_returns_false_when_the_timeout_passes_without_a_message() -> None:
    """§5: a wait without a delivery times out (small bound)."""
    mailbox = AgentMailbox()
    assert await mailbox.wait(SHORT_TIMEOUT_S) is False


async def test_wait_after_a_timeout_can_wait_again_and_deliver() -> None:
    """§10: wait timeout then wait again works."""
    mailbox = AgentMailbox()
    assert await mailbox.wait(SHORT_TIMEOUT_S) is False
    asyncio.get_running_loop().call_soon(mailbox.deliver, _msg(1))
    assert await mailbox.wait(600.0) is True


async def test_wait_after_a_drain_waits_for_a_new_message() -> None:
    """§6: a drained mailbox is empty again; the next wait does not see old messages."""
    mailbox = AgentMailbox()
    mailbox.deliver(_msg(1))
    mailbox.drain()
    assert await mailbox.wait(SHORT_TIMEOUT_S) is False


async def test_cancelling_the_waiter_ends_the_wait_with_cancelled_error() -> None:
    """§5: parent cancellation ends the wait."""
    mailbox = AgentMailbox()
    waiter = asyncio.create_task(mailbox.wait(600.0))
    asyncio.get_running_loop().call_soon(waiter.cancel)
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert waiter.cancelled()
    assert mailbox.deliver(_msg(1))
