"""Pruning old tool results in the request copy (context-window.md §4.2, compaction.md §2)."""

from __future__ import annotations

import posixpath

import orjson
from ctx_support import History, image, only_text, prepare

from openwork_chat_state.messages import TextBlock, ToolResultBlock, ToolResultState
from openwork_core.context.prune import (
    PRUNE_MARKER_WITH_SPILL,
    PRUNE_MARKER_WITHOUT_SPILL,
    prune_marker,
    prune_tool_result,
)
from openwork_tools.spill import spill_file_name


def _long(n: int, ch: str = "x") -> str:
    return "".join(chr(ord("a") + i % 26) if ch == "abc" else ch for i in range(n))


def _tool_turn(h: History, call_id: str, text: str) -> None:
    h.user("go")
    h.assistant("", (call_id, "read"))
    h.result(call_id, text)


def test_a_result_over_8192_characters_below_the_watermark_keeps_head_marker_and_tail() -> None:
    """§4.2 / compaction.md §2: first 4 096 + newline + marker + newline + last 1 024."""
    text = _long(10_000, "abc")
    h = History()
    _tool_turn(h, "call-1", text)
    prepared = prepare(h.view(watermark=h.last_sequence), spill_dir="/home/u/.openwork/spill/s1")
    expected = (
        text[:4096] + "\n... [tool result pruned: 4880 characters omitted. Full result at "
        "/home/u/.openwork/spill/s1/call-1.txt — read it if you still need it]\n" + text[-1024:]
    )
    assert only_text(prepared.conversation[2]) == expected
    assert prepared.projection.pruned == 1


def test_without_a_spill_directory_the_marker_names_only_the_omitted_count() -> None:
    """compaction.md §2: the marker without a spill directory."""
    text = "y" * 9_000
    h = History()
    _tool_turn(h, "c", text)
    prepared = prepare(h.view(watermark=h.last_sequence), spill_dir=None)
    assert only_text(prepared.conversation[2]) == (
        "y" * 4096 + "\n... [tool result pruned: 3880 characters omitted]\n" + "y" * 1024
    )


def test_exactly_8192_characters_is_not_pruned_and_8193_is() -> None:
    """compaction.md §2: candidates exceed 8 192 characters."""
    h = History()
    _tool_turn(h, "a", "z" * 8192)
    _tool_turn(h, "b", "z" * 8193)
    prepared = prepare(h.view(watermark=h.last_sequence))
    assert only_text(prepared.conversation[2]) == "z" * 8192
    assert "[tool result pruned: 3073 characters omitted" in only_text(prepared.conversation[5])
    assert prepared.projection.pruned == 1


def test_characters_are_unicode_code_points_and_text_parts_join_with_newlines() -> None:
    """compaction.md §2: characters are Unicode scalar values; parts joined with newlines."""
    part = "é😀" * 2_500  # 5 000 code points, far more bytes
    h = History()
    h.user("go")
    h.assistant("", ("c", "read"))
    h.result("c", part, part)
    prepared = prepare(h.view(watermark=h.last_sequence), spill_dir=None)
    joined = part + "\n" + part
    assert only_text(prepared.conversation[2]) == (
        joined[:4096] + "\n... [tool result pruned: 4881 characters omitted]\n" + joined[-1024:]
    )


def test_data_blocks_of_a_pruned_result_are_kept() -> None:
    """compaction.md §2: data blocks are kept."""
    h = History()
    h.user("go")
    h.assistant("", ("c", "read"))
    h.result("c", "q" * 9000, image())
    prepared = prepare(h.view(watermark=h.last_sequence))
    (block,) = prepared.conversation[2].tool_results
    assert isinstance(block.output[0], TextBlock)
    assert block.output[1] == image()


def test_results_above_the_watermark_or_without_one_are_never_pruned() -> None:
    """compaction.md §2: only sequence ≤ watermark; the latest results are never pruned."""
    h = History()
    _tool_turn(h, "old", "o" * 9000)
    watermark = h.last_sequence
    _tool_turn(h, "new", "n" * 9000)
    pruned = prepare(h.view(watermark=watermark))
    assert "[tool result pruned" in only_text(pruned.conversation[2])
    assert only_text(pruned.conversation[5]) == "n" * 9000
    unpruned = prepare(h.view(watermark=None))
    assert unpruned.projection.pruned == 0


def test_the_spill_file_name_replaces_unsafe_characters_of_the_call_id() -> None:
    """compaction.md §2: the marker names `<spill dir>/<tool-call-id>.txt` safely — the name the
    tool's own spill file has (one rule, ``openwork_tools.spill``)."""
    assert spill_file_name("call_1-A") == "call_1-A.txt"
    assert spill_file_name("fc/../x:y z") == "fc____x_y_z.txt"
    h = History()
    _tool_turn(h, "toolu/01:ab", "w" * 9000)
    prepared = prepare(h.view(watermark=h.last_sequence), spill_dir="/sp")
    assert "Full result at /sp/toolu_01_ab.txt — read it" in only_text(prepared.conversation[2])


def test_pruning_is_byte_stable_and_leaves_the_stored_result_intact() -> None:
    """compaction.md §2: pruning happens only in the request copy; the bytes never drift."""
    h = History()
    _tool_turn(h, "c", _long(20_000, "abc"))
    stored = orjson.dumps(h.items[2].message)
    view = h.view(watermark=h.last_sequence)
    first = orjson.dumps(prepare(view).request)
    second = orjson.dumps(prepare(view).request)
    assert first == second
    assert orjson.dumps(h.items[2].message) == stored


def test_the_marker_is_the_documented_template_filled_in() -> None:
    """The marker is written directly (no ``str.format``); it stays the published template."""
    for spill_dir in ("/home/u/.openwork/spill/s1", "/home/u/spill/", "", "relative/dir"):
        assert prune_marker(77, "call/1 é", spill_dir) == PRUNE_MARKER_WITH_SPILL.format(
            omitted=77, path=posixpath.join(spill_dir, "call_1__.txt")
        )
    assert prune_marker(5, "c", None) == PRUNE_MARKER_WITHOUT_SPILL.format(omitted=5)


def test_a_result_with_data_blocks_keeps_them_after_the_pruned_text() -> None:
    """compaction.md §2: the pruned text block, then every data block unchanged and in order."""
    block = image()
    result = ToolResultBlock(
        id="c",
        name="read",
        output=(TextBlock(text="a" * 5_000), block, TextBlock(text="b" * 5_000), block),
        state=ToolResultState.SUCCESS,
    )
    pruned = prune_tool_result(result, None)
    assert pruned is not None
    assert pruned.output[1:] == (block, block)
    text = pruned.output[0]
    assert isinstance(text, TextBlock)
    assert text.text.startswith("a" * 4_096 + "\n... [tool result pruned: 4881 characters")
    assert text.text.endswith("\n" + "b" * 1_024)
