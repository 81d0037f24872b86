"""Property tests over random histories (context-window.md §4.2, §6, §7.1, §10 invariant 9).

Histories mix interrupted calls, duplicated, misplaced, reordered and orphan results, oversized
results (pruned and projected), data blocks and contextual messages. Whatever the input, the
request copy is legal, deterministic to the byte, idempotent on its own output, and measured
exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
from ctx_support import SYSTEM, TOOLS, History, fresh, image, measured_budget, prepare
from hypothesis import given, settings
from hypothesis import strategies as st

from openwork_chat_state.item import ConversationItem, MessageKind, RealOrigin
from openwork_chat_state.messages import Message, Role, ToolOutputBlock
from openwork_chat_state.view import ConversationContextView
from openwork_core.context.engine import PreparedModelCall
from openwork_core.context.provenance import RealProvenance
from openwork_core.models.capabilities import ModelCapabilities

ALPHABET = 'abcdefghij é😀"\\\n\t\x01'
SIZES = (0, 40, 8_192, 8_193, 12_000, 40_000)


@dataclass(frozen=True)
class UserEvent:
    kind: MessageKind
    with_data: bool


@dataclass(frozen=True)
class AssistantEvent:
    calls: int


@dataclass(frozen=True)
class ResultEvent:
    target: int  # index into the calls issued so far; negative → an unknown call
    size: int
    offset: int
    with_data: bool


events = st.one_of(
    st.builds(UserEvent, st.sampled_from(list(MessageKind)), st.booleans()),
    st.builds(AssistantEvent, st.integers(0, 3)),
    st.builds(
        ResultEvent,
        st.integers(-1, 12),
        st.sampled_from(SIZES),
        st.integers(0, len(ALPHABET) - 1),
        st.booleans(),
    ),
)


@dataclass(frozen=True)
class Case:
    view: ConversationContextView
    capabilities: ModelCapabilities
    spill_dir: str | None


def _text(size: int, offset: int) -> str:
    rotated = ALPHABET[offset:] + ALPHABET[:offset]
    return (rotated * (size // len(rotated) + 1))[:size]


def _build(
    script: list[UserEvent | AssistantEvent | ResultEvent], accepts: bool, watermark_at: int | None
) -> ConversationContextView:
    h = History()
    calls: list[tuple[str, str]] = []
    for event in script:
        match event:
            case UserEvent(kind=kind, with_data=with_data):
                item = h.user(f"user {kind}", kind)
                # real user input never carries data for a model without data blocks
                if with_data and (accepts or kind is not MessageKind.NORMAL):
                    h.items[-1] = ConversationItem(
                        message=Message(role=Role.USER, content=(*item.message.content, image())),
                        kind=kind,
                        origin=item.origin,
                    )
            case AssistantEvent(calls=n):
                ids = [(f"call-{len(calls) + i}", f"tool{i}") for i in range(n)]
                calls.extend(ids)
                h.assistant(f"step {len(calls)}", *ids)
            case ResultEvent(target=target, size=size, offset=offset, with_data=with_data):
                cid, name = calls[target % len(calls)] if calls and target >= 0 else ("x", "y")
                output: list[ToolOutputBlock | str] = [_text(size, offset)]
                if with_data:
                    output.append(image("QUJD" * (size // 8 + 1)))
                h.result(cid, *output, name=name)
    watermark = None if watermark_at is None else min(watermark_at, h.last_sequence)
    return h.view(watermark=watermark)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    accepts = draw(st.booleans())
    script = draw(st.lists(events, max_size=30))
    watermark_at = draw(st.one_of(st.none(), st.integers(0, 30)))
    capabilities = ModelCapabilities(
        context_window_tokens=200_000, max_output_tokens=32_000, accepts_data_blocks=accepts
    )
    spill_dir = draw(st.sampled_from([None, "/tmp/spill/s"]))
    return Case(_build(script, accepts, watermark_at), capabilities, spill_dir)


def _prepare(case: Case, view: ConversationContextView | None = None) -> PreparedModelCall:
    return prepare(view or case.view, capabilities=case.capabilities, spill_dir=case.spill_dir)


def assert_legal(conversation: tuple[Message, ...]) -> None:
    """Each call answered exactly once, right after its Assistant message, in call order; no
    other tool message; no System message."""
    i = 0
    while i < len(conversation):
        message = conversation[i]
        assert message.role is not Role.SYSTEM
        assert message.role is not Role.TOOL, f"tool message at {i} answers no preceding call"
        i += 1
        if message.role is Role.ASSISTANT:
            for call in message.tool_calls:
                answer = conversation[i]
                assert answer.role is Role.TOOL
                (result,) = answer.content
                assert answer.tool_results == (result,)
                assert (result.id, result.name) == (call.id, call.name)
                i += 1


@settings(max_examples=150, deadline=None)
@given(cases())
def test_the_request_copy_is_always_legal_and_within_the_per_item_limit(case: Case) -> None:
    """§4.2: pairing is restored for any history; no tool message exceeds 8 000 tokens; without
    data-block support no data block survives."""
    prepared = _prepare(case)
    assert_legal(prepared.conversation)
    assert len(prepared.provenance) == len(prepared.conversation)
    for message in prepared.conversation:
        if message.role is Role.TOOL:
            assert -(-len(orjson.dumps(message)) // 4) <= 8_000
        if not case.capabilities.accepts_data_blocks:
            assert b'"type":"data"' not in orjson.dumps(message)


@settings(max_examples=150, deadline=None)
@given(cases())
def test_prepare_is_deterministic_to_the_byte_with_or_without_caches(case: Case) -> None:
    """§10 invariant 9: same history, same bytes — cached, uncached, repeated."""
    first = _prepare(case)
    warm = _prepare(case)
    cold = _prepare(case, fresh(case.view))
    assert orjson.dumps(first.request) == orjson.dumps(warm.request) == orjson.dumps(cold.request)
    assert first.budget == warm.budget == cold.budget
    assert first.projection == warm.projection == cold.projection
    assert first.provenance == cold.provenance


@settings(max_examples=150, deadline=None)
@given(cases())
def test_prepare_is_idempotent_on_its_own_output_conversation(case: Case) -> None:
    """§4.2: the copy of a copy is the copy — nothing left to prune, project, pair or filter."""
    prepared = _prepare(case)
    items: list[ConversationItem] = []
    sequence = 0
    for index, (message, origin) in enumerate(
        zip(prepared.conversation, prepared.provenance, strict=True)
    ):
        kind = MessageKind.NORMAL
        if isinstance(origin, RealProvenance):
            sequence, kind = origin.sequence, origin.kind
        items.append(
            ConversationItem(
                message=message,
                kind=kind,
                origin=RealOrigin(message_id=f"again-{index}", sequence=sequence),
            )
        )
    again = _prepare(
        case,
        ConversationContextView(tuple(items), case.view.tool_result_pruned_through_sequence),
    )
    assert orjson.dumps(again.conversation) == orjson.dumps(prepared.conversation)
    assert again.projection.synthesized_results == 0
    assert again.projection.dropped_results == 0
    assert again.projection.pruned == 0
    assert again.projection.truncated == 0
    assert again.projection.dropped_data_blocks == 0


@settings(max_examples=100, deadline=None)
@given(cases())
def test_the_budget_always_equals_a_re_measurement_of_the_request(case: Case) -> None:
    """§7.1, §11 item 17: the estimate corresponds to the very request prepared."""
    prepared = _prepare(case)
    assert prepared.budget == measured_budget(
        SYSTEM,
        prepared.request.messages[len(SYSTEM.parts) :],
        TOOLS,
        case.capabilities.max_output_tokens,
    )
