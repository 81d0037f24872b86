"""A property of the sampling flow (context-window.md §3): whatever the sequence of world changes,
process restarts and compactions, after every sampling the Conversation tells the model exactly the
current world, and an unchanged world under a known baseline adds nothing."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from openwork_chat_state.item import ConversationItem, MessageKind
from openwork_core.context.world_state.capture import WorldStateCapture
from openwork_core.context.world_state.ids import SECTION_ORDER, SectionId
from openwork_core.context.world_state.sections import SECTION_SPECS, MessageForm, recognise_message

from .support import Session, capture, user_item


def body(section: SectionId, version: int | None) -> str | None:
    if version is None:
        return None
    tag = SECTION_SPECS[section].tag
    return f"{tag}\nversion {version}\n</end>"


def world(versions: tuple[int | None, ...]) -> WorldStateCapture:
    bodies = [body(s, v) for s, v in zip(SECTION_ORDER, versions, strict=True)]
    return capture(*bodies)


def what_the_model_knows(items: list[ConversationItem]) -> dict[SectionId, str | None]:
    """Read the Conversation as the model does: the latest message per section wins."""
    known: dict[SectionId, str | None] = dict.fromkeys(SECTION_ORDER)
    for item in items:
        if item.kind is not MessageKind.WORLD_STATE:
            continue
        recognised = recognise_message(item.message.text)
        assert recognised is not None, "every World State message is recognisable"
        section, form = recognised
        spec = SECTION_SPECS[section]
        if form is MessageForm.INVALIDATION:
            known[section] = None
        else:
            text = item.message.text
            notice = spec.replacement_notice + "\n\n"
            known[section] = text.removeprefix(notice)
    return known


@dataclass(frozen=True)
class Sample:
    versions: tuple[int | None, ...]


@dataclass(frozen=True)
class Restart:
    pass


@dataclass(frozen=True)
class Compact:
    keep_last: int


versions = st.tuples(*[st.sampled_from([None, 1, 2])] * 4)
operations = st.lists(
    st.one_of(
        versions.map(Sample),
        st.just(Restart()),
        st.integers(min_value=0, max_value=6).map(Compact),
    ),
    max_size=25,
)


@settings(max_examples=300, deadline=None)
@given(operations)
def test_after_every_sampling_the_conversation_tells_the_current_world(ops: list[object]) -> None:
    """§3: notices per the table; restart re-sends once; a compacted-away section is re-sent."""
    session = Session.fresh()
    last: tuple[int | None, ...] | None = None
    compacted = False
    for op in ops:
        match op:
            case Sample(versions=v):
                known_before = session.baseline.capture is not None
                updates = session.sample(world(v))
                current = world(v)
                assert what_the_model_knows(session.items) == {
                    s: current.body(s) for s in SECTION_ORDER
                }
                if known_before and v == last and not compacted:
                    assert updates == ()
                last, compacted = v, False
            case Restart():
                session = session.restarted()
            case Compact(keep_last=n):
                kept = session.items[-n:] if n else []
                session.items = [user_item("summary"), *kept]
                compacted = True
