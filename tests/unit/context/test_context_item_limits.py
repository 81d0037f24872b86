"""Per-item limits on author-controlled items (context-window.md §7.3)."""

from __future__ import annotations

import orjson
import pytest

from openwork_chat_state.messages import Message, Role, TextBlock
from openwork_core.context.builder import SystemContextPart
from openwork_core.context.errors import AgentMessageTooLarge, SkillTooLarge, SystemContextInvalid
from openwork_core.context.item_limits import (
    check_agent_message,
    check_skill_body,
    check_system_context_part,
    estimate_text_item_tokens,
)


def _text_of_tokens(tokens: int, role: Role = Role.USER) -> str:
    """A text whose message estimate is exactly ``tokens``."""
    envelope = len(orjson.dumps(Message(role=role, content=(TextBlock(text=""),))))
    return "a" * (tokens * 4 - envelope)


def test_the_estimate_of_a_text_item_is_its_message_json_bytes_over_four() -> None:
    """§7.1, §7.3: the same metric as the budget."""
    text = 'héllo "world"\n'
    message = Message(role=Role.USER, content=(TextBlock(text=text),))
    assert estimate_text_item_tokens(text) == -(-len(orjson.dumps(message)) // 4)
    assert estimate_text_item_tokens(_text_of_tokens(123)) == 123


def test_a_system_context_part_must_be_under_10000_tokens() -> None:
    """§7.3: at 10 000 tokens request assembly fails (`system_context_invalid`)."""
    under = SystemContextPart(key="k", content=_text_of_tokens(9_999, Role.SYSTEM))
    assert check_system_context_part(under) == 9_999
    at = SystemContextPart(key="k", content=_text_of_tokens(10_000, Role.SYSTEM))
    with pytest.raises(SystemContextInvalid) as raised:
        check_system_context_part(at)
    assert raised.value.code == "system_context_invalid"


def test_a_skill_body_must_be_under_8000_tokens() -> None:
    """§7.3: at 8 000 tokens starting the Turn is refused (`skill_too_large`), never trimmed."""
    assert check_skill_body("s", _text_of_tokens(7_999)) == 7_999
    with pytest.raises(SkillTooLarge) as raised:
        check_skill_body("s", _text_of_tokens(8_000))
    assert raised.value.code == "skill_too_large"


def test_an_agent_message_must_be_under_4000_tokens() -> None:
    """§7.3: at 4 000 tokens delivery fails (`agent_delivery_failed`)."""
    assert check_agent_message(_text_of_tokens(3_999)) == 3_999
    with pytest.raises(AgentMessageTooLarge) as raised:
        check_agent_message(_text_of_tokens(4_000))
    assert raised.value.code == "agent_delivery_failed"
