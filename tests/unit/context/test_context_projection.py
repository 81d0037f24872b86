"""Per-item projection of oversized tool results (context-window.md §4.2)."""

from __future__ import annotations

import re

import orjson
import pytest
from ctx_support import History, image, only_text, prepare
from hypothesis import given, settings
from hypothesis import strategies as st

from openwork_chat_state.messages import DataBlock, TextBlock, ToolResultBlock, ToolResultState
from openwork_core.context.projection import (
    TOOL_RESULT_BYTE_LIMIT,
    _longest_prefix,
    _longest_suffix,
    tool_message,
    truncate_tool_result,
)


def _result(*output: TextBlock | DataBlock, call_id: str = "c") -> ToolResultBlock:
    return ToolResultBlock(id=call_id, name="bash", output=output, state=ToolResultState.SUCCESS)


def _size(block: ToolResultBlock) -> int:
    return len(orjson.dumps(tool_message(block)))


@pytest.mark.parametrize(
    "text",
    [
        "".join(chr(ord("a") + i % 26) for i in range(100_000)),
        'quote " and backslash \\ and newline \n ' * 4_000,
        "é😀中\t\x01" * 20_000,
    ],
    ids=["ascii", "escaped", "multibyte-and-control"],
)
def test_a_result_over_8000_tokens_is_cut_to_at_most_8000_tokens_with_a_marker(text: str) -> None:
    """§4.2: head and tail kept around a truncation marker; the message fits 8 000 tokens."""
    block = _result(TextBlock(text=text))
    assert _size(block) > TOOL_RESULT_BYTE_LIMIT
    projected = truncate_tool_result(block)
    assert _size(projected) <= TOOL_RESULT_BYTE_LIMIT
    assert -(-_size(projected) // 4) <= 8_000
    (out,) = projected.output
    assert isinstance(out, TextBlock)
    match = re.fullmatch(r"(.*)\n(\.\.\. \[tool result truncated[^\]]*\])\n(.*)", out.text, re.S)
    assert match is not None
    head, marker, tail = match.groups()
    assert text.startswith(head) and text.endswith(tail)
    omitted = len(text) - len(head) - len(tail)
    assert marker.endswith(f": {omitted} characters and 0 data blocks omitted]")


def test_the_head_gets_three_quarters_of_the_budget_and_the_tail_one_quarter() -> None:
    """§4.2: the text keeps the first 75 % and the last 25 % of the budget."""
    text = "".join(chr(ord("a") + i % 26) for i in range(100_000))
    projected = truncate_tool_result(_result(TextBlock(text=text)))
    (out,) = projected.output
    assert isinstance(out, TextBlock)
    head, rest = out.text.split("\n", 1)
    marker, tail = rest.split("\n", 1)
    assert text.startswith(head) and text.endswith(tail)
    assert 2.9 < len(head) / len(tail) < 3.1
    omitted = len(text) - len(head) - len(tail)
    assert marker == (
        f"... [tool result truncated to fit the context window: {omitted} characters "
        "and 0 data blocks omitted]"
    )
    # the budget is used up to the envelope: nearly 32 000 bytes
    assert _size(projected) > TOOL_RESULT_BYTE_LIMIT - 16


def test_an_oversized_result_loses_its_data_blocks_and_counts_as_truncated() -> None:
    """§4.2: data blocks are removed from a truncated result."""
    big_image = image("A" * 40_000)
    h = History()
    h.user("look")
    h.assistant("", ("c", "screenshot"))
    h.result("c", "small caption", big_image)
    prepared = prepare(h.view())
    text = only_text(prepared.conversation[2])
    assert text == (
        "small caption\n... [tool result truncated to fit the context window: "
        "0 characters and 1 data blocks omitted]"
    )
    assert prepared.projection.truncated == 1
    assert prepared.projection.dropped_data_blocks == 0


def test_a_result_of_at_most_8000_tokens_is_untouched() -> None:
    """§4.2: only results estimated over 8 000 tokens are projected."""
    h = History()
    h.user("go")
    h.assistant("", ("c", "read"))
    item = h.result("c", "k" * 31_000, image())
    prepared = prepare(h.view())
    assert prepared.conversation[2] == item.message
    assert prepared.projection.truncated == 0


def test_projecting_a_projected_result_changes_nothing() -> None:
    """§4.2, §10 invariant 9: the projection is a fixed point and byte-stable."""
    block = _result(TextBlock(text="é" * 60_000), image())
    once = truncate_tool_result(block)
    assert _size(once) <= TOOL_RESULT_BYTE_LIMIT
    assert orjson.dumps(truncate_tool_result(block)) == orjson.dumps(once)
    h = History()
    h.user("go")
    h.assistant("", ("c", "bash"))
    h.add(tool_message(once))
    assert prepare(h.view()).projection.truncated == 0


def test_a_pruned_result_is_projected_only_if_it_is_still_over_the_limit() -> None:
    """§4.2: prune first, then projection on what pruning left."""
    h = History()
    h.user("go")
    h.assistant("", ("c", "read"))
    h.result("c", "p" * 60_000)
    prepared = prepare(h.view(watermark=h.last_sequence))
    assert prepared.projection.pruned == 1
    assert prepared.projection.truncated == 0


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet='ab"\\\n\t\x01é😀中', min_size=0, max_size=3_000),
    st.integers(min_value=0, max_value=4_000),
)
def test_the_kept_head_and_tail_are_the_longest_that_fit_their_byte_budget(
    text: str, budget: int
) -> None:
    """§4.2 (precise definition in projection.py): the chunked scan finds exactly the longest
    prefix and suffix whose JSON-encoded bytes fit the budget."""

    def encoded(s: str) -> int:
        return len(orjson.dumps(s)) - 2

    prefix = _longest_prefix(text, budget)
    suffix = _longest_suffix(text, budget)
    assert encoded(text[:prefix]) <= budget
    assert prefix == len(text) or encoded(text[: prefix + 1]) > budget
    assert encoded(text[len(text) - suffix :]) <= budget
    assert suffix == len(text) or encoded(text[len(text) - suffix - 1 :]) > budget
