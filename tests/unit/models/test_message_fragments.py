"""``MessageFragments``: the per-message encoding memo of the OpenAI adapters (issue 13 §1,
history-independent per-call cost; model-providers.md §1 for the encodings themselves)."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable, Sequence

import orjson
import pytest

from openwork_chat_state.messages import (
    Base64Source,
    DataBlock,
    FileIdSource,
    Message,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
    user_text,
)
from openwork_core.models.adapters import raw_body
from openwork_core.models.adapters.openai_chat_encode import encode_messages
from openwork_core.models.adapters.openai_responses_encode import encode_input
from openwork_core.models.adapters.raw_body import MessageFragments, dump_body
from openwork_core.models.port import ModelError, ModelErrorKind

ENCODERS = pytest.mark.parametrize(
    "encode", [encode_messages, encode_input], ids=["chat", "responses"]
)


def history(turn: int) -> list[Message]:
    """A varied stretch of conversation: text with non-ASCII and escapes, reasoning, two
    parallel tool calls with their results in one tool message, an image."""
    image = DataBlock(source=Base64Source(data="aGVsbG8=", media_type="image/png"), name="shot")
    return [
        Message(role=Role.SYSTEM, content=(TextBlock(text=f"rules {turn}"),)),
        user_text(f'turn {turn}: "quote" ünïcode 日本 \u2028 \t end'),
        Message(
            role=Role.ASSISTANT,
            content=(
                ThinkingBlock(thinking="let me look"),
                TextBlock(text="Looking."),
                ToolCallBlock(id=f"a{turn}", name="read", input='{"path": "a.py"}'),
                ToolCallBlock(id=f"b{turn}", name="read", input='{"path": "b.py"}'),
            ),
        ),
        Message(
            role=Role.TOOL,
            content=(
                ToolResultBlock(
                    id=f"a{turn}",
                    name="read",
                    output=(TextBlock(text="print('a')\n"),),
                    state=ToolResultState.SUCCESS,
                ),
                ToolResultBlock(
                    id=f"b{turn}",
                    name="read",
                    output=(TextBlock(text="boom"), image),
                    state=ToolResultState.ERROR,
                ),
            ),
        ),
        Message(role=Role.USER, content=(TextBlock(text="and this"), image)),
        Message(role=Role.ASSISTANT, content=(TextBlock(text=f"done {turn}"),)),
    ]


class CountingEncoder:
    def __init__(self, encode: object) -> None:
        self._encode = encode
        self.encoded = 0

    def __call__(self, messages: Sequence[Message]) -> Sequence[object]:
        self.encoded += len(messages)
        assert callable(self._encode)
        result = self._encode(messages)
        assert isinstance(result, list)
        return result


@ENCODERS
def test_the_joined_fragments_are_byte_for_byte_one_dump_of_the_whole_encoding(
    encode: object,
) -> None:
    """issue 13 §1: the memo changes no byte of the request — after appends, and for a new
    Message object equal in value to one already seen."""
    assert callable(encode)
    memo = MessageFragments(encode)
    messages = history(1)
    for turn in range(2, 5):
        assert dump_body(memo.array(messages)) == orjson.dumps(encode(messages))
        messages = [*messages, *history(turn), user_text("again")]
    copies = [Message(role=m.role, content=m.content) for m in messages]
    assert dump_body(memo.array(copies)) == orjson.dumps(encode(messages))
    assert dump_body({"input": memo.array([]), "model": "m"}) == b'{"input":[],"model":"m"}'


@ENCODERS
def test_each_message_is_encoded_once_while_it_lives(encode: object) -> None:
    """issue 13 §1: a call encodes only the messages the previous calls did not."""
    counting = CountingEncoder(encode)
    memo = MessageFragments(counting)
    messages = history(1)
    memo.array(messages)
    assert counting.encoded == len(messages)
    messages = [*messages, user_text("one more")]
    memo.array(messages)
    memo.array(messages)
    assert counting.encoded == len(messages)


def test_a_message_that_is_gone_leaves_no_fragment_behind() -> None:
    """issue 13 §5 (memory): fragments live exactly as long as their messages."""
    memo = MessageFragments(encode_messages)
    kept = history(1)
    dropped = history(2)
    memo.array([*kept, *dropped])
    assert len(memo) == len(kept) + len(dropped)
    del dropped
    gc.collect()
    assert len(memo) == len(kept)


def test_an_encoding_error_surfaces_and_is_not_remembered() -> None:
    """model-providers.md §1: a ``file_id`` source is ``invalid_request`` before any I/O, on
    every call (nothing half-encoded is kept)."""
    memo = MessageFragments(encode_messages)
    bad = Message(
        role=Role.USER,
        content=(DataBlock(source=FileIdSource(id="file-1")),),
    )
    for _ in range(2):
        with pytest.raises(ModelError) as raised:
            memo.array([user_text("fine"), bad])
        assert raised.value.kind is ModelErrorKind.INVALID_REQUEST
    assert len(memo) == 1


@ENCODERS
def test_interleaved_histories_and_reused_ids_stay_byte_for_byte(encode: object) -> None:
    """issue 13 §1: two sessions calling in turn through one adapter, and histories whose
    messages died (their ids free for new objects), still give one dump of the encoding."""
    assert callable(encode)
    memo = MessageFragments(encode)
    first, second = history(1), history(2)
    for turn in range(3, 7):
        for messages in (first, second):
            assert dump_body(memo.array(messages)) == orjson.dumps(encode(messages))
        first = [*first, *history(turn)]
        second = [*second[:-2], *history(turn + 10)]  # a rewritten tail: no longer a prefix
        gc.collect()


def test_an_extended_history_encodes_only_its_new_messages() -> None:
    """issue 13 §1: the joined history is reused, so the fragments of the new messages are the
    only ones computed."""
    counting = CountingEncoder(encode_messages)
    memo = MessageFragments(counting)
    messages = history(1)
    memo.array(messages)
    counting.encoded = 0
    longer = [*messages, user_text("more"), user_text("and more")]
    assert dump_body(memo.array(longer)) == orjson.dumps(encode_messages(longer))
    assert counting.encoded == 2


@ENCODERS
def test_a_kept_fragment_holds_only_its_own_bytes(
    encode: Callable[[Sequence[Message]], Sequence[object]],
) -> None:
    """issue 13 §5 (memory per loaded session): an ``orjson.dumps`` result keeps its whole
    write buffer (4 KiB and more); the fragments kept for live messages are exact copies. Only
    what is still allocated under ``raw_body``'s frames counts: the process's other threads (a
    worker's database dropper, say) allocate while this runs."""
    fragments = MessageFragments(encode)
    messages = [user_text(f"short message {n}") for n in range(200)]
    gc.collect()
    tracemalloc.start(32)
    try:
        fragments.array(messages)
        gc.collect()
        kept = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(True, raw_body.__file__, all_frames=True)]
        )
    finally:
        tracemalloc.stop()
    held = sum(stat.size for stat in kept.statistics("filename"))
    encoded = sum(len(dump_body(item)) for item in encode(messages))
    assert held < 4 * encoded + 200 * 512, f"{held} bytes kept for {encoded} encoded bytes"
