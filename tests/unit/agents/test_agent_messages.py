"""Agent messages: envelope, id, size cap, live terminal mapping (multi-agent.md §6, §8;
context-window.md §7.3)."""

from __future__ import annotations

import pytest

from openwork_chat_state.messages import Role, TextBlock
from openwork_core.agents.messages import (
    CANCELLED_ERROR_CODE,
    CANCELLED_ERROR_MESSAGE,
    COMPLETED_WITHOUT_RESPONSE_BODY,
    LIVE_INTERRUPTED_BODY,
    RESTART_INTERRUPTED_BODY,
    AgentMessage,
    AgentMessageKind,
    ChildCancelled,
    ChildCompleted,
    ChildFailed,
    agent_message_content,
    agent_message_id,
    check_deliverable,
    failure_body,
    render_agent_message,
    terminal_agent_message,
)
from openwork_core.context.errors import AgentMessageTooLarge
from openwork_core.context.item_limits import AGENT_MESSAGE_TOKEN_LIMIT, estimate_text_item_tokens


def _msg(
    body: str = "found it", kind: AgentMessageKind = AgentMessageKind.FINAL_ANSWER
) -> AgentMessage:
    return AgentMessage(
        id="agent-msg:c:t:final_answer", task_name="find_auth", kind=kind, body=body
    )


def test_the_envelope_is_byte_for_byte_the_agent_message_block_of_section_6() -> None:
    """§6: task, kind, then the body between its own lines; no trailing newline."""
    text = render_agent_message(_msg("line one\nline two"))
    assert text == (
        "<agent_message>\n"
        "<task>find_auth</task>\n"
        "<kind>final_answer</kind>\n"
        "<body>\n"
        "line one\nline two\n"
        "</body>\n"
        "</agent_message>"
    )


@pytest.mark.parametrize("kind", list(AgentMessageKind))
def test_the_envelope_names_each_kind_by_its_snake_case_value(kind: AgentMessageKind) -> None:
    """§6: ``final_answer|interrupted|failed``."""
    assert f"\n<kind>{kind.value}</kind>\n" in render_agent_message(_msg(kind=kind))
    assert {k.value for k in AgentMessageKind} == {"final_answer", "interrupted", "failed"}


def test_the_message_id_is_agent_msg_child_session_child_turn_kind() -> None:
    """§6: ``agent-msg:{child_session_id}:{child_turn_id}:{kind}``."""
    assert (
        agent_message_id("ses_child", "turn_1", AgentMessageKind.INTERRUPTED)
        == "agent-msg:ses_child:turn_1:interrupted"
    )


def test_the_stored_message_is_one_user_text_block_holding_the_envelope() -> None:
    """§6: User role (an assistant message last in a request would be a prefill)."""
    message = _msg()
    content = agent_message_content(message)
    assert content.role is Role.USER
    assert content.content == (TextBlock(text=render_agent_message(message)),)


def test_an_envelope_under_4000_tokens_is_deliverable_and_its_estimate_is_returned() -> None:
    """§6, context-window.md §7.3: the envelope, not only the body, is estimated."""
    message = _msg("x" * 100)
    assert check_deliverable(message) == estimate_text_item_tokens(render_agent_message(message))


def _body_for(tokens: int) -> str:
    """The longest body whose envelope is estimated at exactly ``tokens`` or just below."""
    body = ""
    step = 4096
    while step:
        candidate = body + "x" * step
        if estimate_text_item_tokens(render_agent_message(_msg(candidate))) <= tokens:
            body = candidate
        else:
            step //= 2
    return body


def test_an_envelope_at_exactly_4000_tokens_is_rejected_with_agent_delivery_failed() -> None:
    """§6: at or above 4 000 tokens delivery fails (code ``agent_delivery_failed``)."""
    at_limit = _msg(_body_for(AGENT_MESSAGE_TOKEN_LIMIT))
    assert estimate_text_item_tokens(render_agent_message(at_limit)) == AGENT_MESSAGE_TOKEN_LIMIT
    with pytest.raises(AgentMessageTooLarge) as caught:
        check_deliverable(at_limit)
    assert caught.value.code == "agent_delivery_failed"
    just_under = _msg(_body_for(AGENT_MESSAGE_TOKEN_LIMIT - 1))
    assert check_deliverable(just_under) == AGENT_MESSAGE_TOKEN_LIMIT - 1


def test_a_body_that_fits_alone_but_not_in_its_envelope_is_rejected() -> None:
    """§6: the estimate covers the envelope's tags too."""
    body = _body_for(AGENT_MESSAGE_TOKEN_LIMIT)
    assert estimate_text_item_tokens(body) < AGENT_MESSAGE_TOKEN_LIMIT
    with pytest.raises(AgentMessageTooLarge):
        check_deliverable(_msg(body))


def test_a_completed_child_turn_delivers_its_final_text_as_final_answer() -> None:
    """§6: Completed{final_text} → final_answer / final text."""
    message = terminal_agent_message(
        child_session_id="c1",
        child_turn_id="t1",
        task_name="scan",
        outcome=ChildCompleted(final_text="done"),
    )
    assert message == AgentMessage(
        id="agent-msg:c1:t1:final_answer",
        task_name="scan",
        kind=AgentMessageKind.FINAL_ANSWER,
        body="done",
    )


def test_a_failed_child_turn_delivers_code_colon_message_as_failed() -> None:
    """§6: Failed{code, message} → failed / ``<code>: <message>``."""
    message = terminal_agent_message(
        child_session_id="c1",
        child_turn_id="t2",
        task_name="scan",
        outcome=ChildFailed(error_code="max_model_calls", error_message="limit reached"),
    )
    assert message.kind is AgentMessageKind.FAILED
    assert message.body == "max_model_calls: limit reached"
    assert message.id == "agent-msg:c1:t2:failed"


def test_a_cancelled_child_turn_delivers_the_fixed_interrupted_body() -> None:
    """§6: Cancelled (via interrupt) → interrupted / ``Sub-agent turn was interrupted.``"""
    message = terminal_agent_message(
        child_session_id="c1", child_turn_id="t3", task_name="scan", outcome=ChildCancelled()
    )
    assert message.kind is AgentMessageKind.INTERRUPTED
    assert message.body == "Sub-agent turn was interrupted."
    assert message.id == "agent-msg:c1:t3:interrupted"


def test_the_fixed_bodies_are_the_texts_of_sections_6_and_8() -> None:
    """§6, §8: fixed texts, each defined once."""
    assert LIVE_INTERRUPTED_BODY == "Sub-agent turn was interrupted."
    assert (
        COMPLETED_WITHOUT_RESPONSE_BODY == "Sub-agent completed without a persisted final response."
    )
    assert RESTART_INTERRUPTED_BODY == (
        "Sub-agent was interrupted by a process restart and is no longer available. "
        "Spawn a new explorer if this result is still needed."
    )
    assert failure_body(CANCELLED_ERROR_CODE, CANCELLED_ERROR_MESSAGE) == (
        "cancelled: Sub-agent turn was cancelled."
    )


def test_a_message_under_the_cap_is_delivered_as_is_and_one_over_it_becomes_a_failed_notice() -> (
    None
):
    """multi-agent.md §6, context-window.md §7.3 (decision: never an undeliverable message)."""
    from openwork_core.agents.messages import AgentMessage, AgentMessageKind, fit_for_delivery

    small = AgentMessage(
        id="agent-msg:c:t:final_answer",
        task_name="scan",
        kind=AgentMessageKind.FINAL_ANSWER,
        body="ok",
    )
    assert fit_for_delivery(small) is small
    huge = AgentMessage(
        id=small.id, task_name="scan", kind=AgentMessageKind.FINAL_ANSWER, body="x" * 20_000
    )
    notice = fit_for_delivery(huge)
    assert (notice.id, notice.task_name, notice.kind) == (small.id, "scan", AgentMessageKind.FAILED)
    assert notice.body.startswith(
        "agent_delivery_failed: the sub-agent's final_answer message is estimated at "
    )
    assert fit_for_delivery(notice) is notice
