"""Request assembly by `ContextEngine.prepare` (context-window.md §6, §10, §11 items 4, 6, 14–16)."""

from __future__ import annotations

import copy

import orjson
import pytest
from ctx_support import CAPS, SYSTEM, TOOLS, History, fresh, prepare

from openwork_chat_state.item import MessageKind, SyntheticReason
from openwork_chat_state.messages import Message, Role, TextBlock
from openwork_core.context import errors
from openwork_core.context.builder import ResolvedSystemContext, SystemContextPart
from openwork_core.context.errors import (
    ContextAssemblyError,
    SystemContextInvalid,
    SystemMessageInConversation,
)
from openwork_core.context.provenance import RealProvenance, SyntheticProvenance


def _history() -> History:
    h = History()
    h.user("## project", MessageKind.WORLD_STATE)
    h.user("fix the bug")
    h.assistant("looking", ("c1", "read"))
    h.result("c1", "file body")
    h.assistant("done")
    return h


def test_assembles_the_system_prefix_ahead_of_the_conversation() -> None:
    """§6 step 5, §11 items 14 and 16: System parts first, Conversation after, tools apart,
    max output from the capabilities, sampling parameters unset."""
    h = _history()
    prepared = prepare(h.view())
    request = prepared.request
    assert request.model == "test-model"
    assert request.messages[0] == Message(
        role=Role.SYSTEM, content=(TextBlock(text="You are a careful coding agent."),)
    )
    assert request.messages[1:] == prepared.conversation
    assert prepared.conversation == tuple(i.message for i in h.items)
    assert request.tools == TOOLS
    assert request.max_output_tokens == CAPS.max_output_tokens
    assert request.temperature is None and request.top_p is None and request.thinking is None
    assert all(m.role is not Role.SYSTEM for m in prepared.conversation)


def test_preserves_the_system_materialization_order() -> None:
    """§6, §11 item 14: one System message per part, in the order the parts were materialized."""
    system = ResolvedSystemContext(
        parts=(
            SystemContextPart(key="core/agent-system", content="first"),
            SystemContextPart(key="extra/b", content="second"),
        )
    )
    prepared = prepare(_history().view(), system=system)
    assert [m.text for m in prepared.request.messages[:2]] == ["first", "second"]
    assert prepared.request.messages[2].text == "## project"


def test_rejects_duplicate_system_context_keys() -> None:
    """§6 step 2, §11 item 4: a duplicated key fails deterministically."""
    system = ResolvedSystemContext(
        parts=(
            SystemContextPart(key="core/agent-system", content="a"),
            SystemContextPart(key="core/agent-system", content="b"),
        )
    )
    for _ in range(2):
        with pytest.raises(SystemContextInvalid, match="duplicate system context key"):
            prepare(_history().view(), system=system)


@pytest.mark.parametrize(
    ("key", "content", "reason"),
    [
        ("", "prompt", "blank key"),
        ("  ", "prompt", "blank key"),
        ("core/agent-system", " \n", "blank content"),
        ("core/agent-system", "x" * 40_000, "tokens"),
    ],
)
def test_rejects_malformed_system_context_and_system_messages_in_conversation(
    key: str, content: str, reason: str
) -> None:
    """§6 steps 2–3, §11 items 4, 6, 15: malformed parts and System messages fail assembly."""
    system = ResolvedSystemContext(parts=(SystemContextPart(key=key, content=content),))
    with pytest.raises(SystemContextInvalid, match=reason) as raised:
        prepare(_history().view(), system=system)
    assert raised.value.code == "system_context_invalid"
    h = _history()
    h.add(Message(role=Role.SYSTEM, content=(TextBlock(text="sneaky"),)))
    with pytest.raises(SystemMessageInConversation) as raised_system:
        prepare(h.view())
    assert raised_system.value.code == "system_message_in_conversation"


def test_a_system_message_in_the_conversation_fails_even_between_a_call_and_its_result() -> None:
    """§6 step 3, §11 item 15."""
    h = History()
    h.assistant("", ("c", "read"))
    h.add(Message(role=Role.SYSTEM, content=(TextBlock(text="x"),)))
    h.result("c", "r")
    with pytest.raises(SystemMessageInConversation):
        prepare(h.view())


def test_a_part_just_under_10000_tokens_is_accepted() -> None:
    """§6 step 2, §7.3: a part must be estimated under 10 000 tokens (strict)."""
    envelope = len(orjson.dumps(Message(role=Role.SYSTEM, content=(TextBlock(text=""),))))
    fits = "a" * (39_996 - envelope)
    ok = ResolvedSystemContext(parts=(SystemContextPart(key="core/agent-system", content=fits),))
    assert prepare(_history().view(), system=ok).budget.system_context_tokens > 9_990
    over = ResolvedSystemContext(
        parts=(SystemContextPart(key="core/agent-system", content=fits + "a"),)
    )
    with pytest.raises(SystemContextInvalid):
        prepare(_history().view(), system=over)


def test_the_same_inputs_give_byte_identical_requests_and_inputs_are_not_mutated() -> None:
    """§4.2, §6, §10 invariant 9: a copy only; same history → same bytes."""
    h = _history()
    h.assistant("", ("c2", "read"))
    view = h.view(watermark=3)
    before = copy.deepcopy([(i.message, i.kind, i.origin) for i in view.items])
    first = orjson.dumps(prepare(view).request)
    assert orjson.dumps(prepare(view).request) == first
    assert orjson.dumps(prepare(fresh(view)).request) == first
    assert [(i.message, i.kind, i.origin) for i in view.items] == before


def test_provenance_names_every_conversation_message_in_order() -> None:
    """§6: the origin of every Conversation message (persisted id, or synthetic)."""
    h = History()
    h.synthetic(SyntheticReason.LAST_USER_REQUEST_REPLAY, "replayed request")
    h.synthetic(SyntheticReason.COMPACTION_SUMMARY, "summary")
    h.user("new request")
    h.assistant("", ("c", "read"))
    prepared = prepare(h.view())
    assert prepared.provenance == (
        SyntheticProvenance(reason="last_user_request_replay"),
        SyntheticProvenance(reason="compaction_summary"),
        RealProvenance(message_id="m1", sequence=1, kind=MessageKind.NORMAL),
        RealProvenance(message_id="m2", sequence=2, kind=MessageKind.NORMAL),
        SyntheticProvenance(reason="interrupted_tool_result"),
    )
    assert len(prepared.provenance) == len(prepared.conversation)


def test_the_engine_treats_contextual_text_as_plain_user_messages() -> None:
    """§11 items 9 and 10 (structural): skill and agent text pass through unchanged as user
    messages; nothing in the request names a Skill or a MessageKind."""
    h = History()
    skill = h.user("<skill name='x'>body</skill>", MessageKind.SKILL_INSTRUCTION)
    agent = h.user("sub-agent says hi", MessageKind.AGENT_MESSAGE)
    prepared = prepare(h.view())
    assert prepared.conversation == (skill.message, agent.message)
    assert b"skill_instruction" not in orjson.dumps(prepared.request)
    assert b"agent_message" not in orjson.dumps(prepared.request)


def test_error_codes_are_unique_and_snake_case() -> None:
    """DESIGN.md §4.5: each error has a stable, unique code."""
    classes = [
        c
        for c in vars(errors).values()
        if isinstance(c, type) and issubclass(c, ContextAssemblyError)
    ]
    codes = [c.code for c in classes]
    assert len(classes) >= 6
    assert len(codes) == len(set(codes))
    assert all(code.replace("_", "").isalpha() and code.islower() for code in codes)


def test_an_empty_conversation_is_still_a_legal_request() -> None:
    """§6: with no messages the request is the System prefix alone."""
    prepared = prepare(History().view())
    assert prepared.conversation == ()
    assert prepared.request.messages == (
        Message(role=Role.SYSTEM, content=(TextBlock(text=SYSTEM.parts[0].content),)),
    )
    assert prepared.budget.conversation_tokens == 1  # "[]"


def test_chat_state_rejects_a_system_message_at_load() -> None:
    """§4.1, §11 item 6 (gap closed at unit level): loading a System message fails with
    `PersistedSystemMessage`, so the engine's own check is a second line of defence."""
    from openwork_chat_state.errors import PersistedSystemMessage
    from openwork_chat_state.state import ConversationState

    h = History()
    h.user("hello")
    h.add(Message(role=Role.SYSTEM, content=(TextBlock(text="persisted by mistake"),)))
    state = ConversationState()
    with pytest.raises(PersistedSystemMessage):
        state.load(h.items, None)
    assert state.context_view().items == ()


def test_chat_state_receives_no_model_system_prompt_or_tool_definitions() -> None:
    """§4.1, §11 item 10 (structural, made checkable): no public method of `ChatStateHandle`
    takes a model, a system prompt, a System Context or tool definitions."""
    import inspect

    from openwork_chat_state.actor import ChatStateHandle

    forbidden_names = {"model", "system", "system_prompt", "tools", "capabilities"}
    forbidden_types = (
        "ModelRequest",
        "ToolDefinition",
        "ResolvedSystemContext",
        "ModelCapabilities",
    )
    for name, method in inspect.getmembers(ChatStateHandle, inspect.isfunction):
        if name.startswith("_"):
            continue
        for parameter in inspect.signature(method).parameters.values():
            assert parameter.name not in forbidden_names, (name, parameter.name)
            assert not any(t in str(parameter.annotation) for t in forbidden_types), name


def test_successive_requests_repeat_the_same_message_objects() -> None:
    """§6 (same inputs → byte-identical request) and issue 13 §1: the System messages of an
    equal System Context, and the Conversation's messages, are the very objects of the previous
    request, so per-message encodings are reused instead of redone."""
    h = _history()
    first = prepare(h.view()).request
    h.user("one more")
    second = prepare(h.view()).request
    assert all(a is b for a, b in zip(first.messages, second.messages, strict=False))
    assert len(second.messages) == len(first.messages) + 1
