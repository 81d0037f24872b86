"""The pruning watermark's spill files (compaction.md §2); the DB steps are integration tests."""

from __future__ import annotations

from pathlib import Path

from openwork_chat_state.messages import user_text
from openwork_core.session.compaction.prune_step import (
    latest_assistant_sequence,
    write_missing_spill_files,
)
from openwork_tools.spill import spill_file_name
from tests.unit.compaction.compaction_support import assistant, real, tool_result

BIG = "".join(f"line {n}\n" for n in range(2_000))


def _items() -> list:  # type: ignore[type-arg]
    return [
        real(user_text("go"), 1),
        real(assistant("", (("call/1", "read"), ("call-2", "read"))), 2),
        real(tool_result("call/1", BIG), 3),
        real(tool_result("call-2", "small"), 4),
        real(assistant("", (("call-3", "read"),)), 5),
        real(tool_result("call-3", BIG), 6),
    ]


def test_the_watermark_is_the_latest_persisted_assistant_message() -> None:
    assert latest_assistant_sequence(_items()) == 5
    assert latest_assistant_sequence(_items()[:1]) is None


def test_missing_spill_files_are_written_only_for_results_that_become_prunable(
    tmp_path: Path,
) -> None:
    """Large results at or below the watermark; small ones and later ones are left alone."""
    written = write_missing_spill_files(_items(), 5, str(tmp_path / "spill"))
    assert written == [tmp_path / "spill" / spill_file_name("call/1")]
    assert written[0].read_text(encoding="utf-8") == BIG
    assert sorted(p.name for p in (tmp_path / "spill").iterdir()) == ["call_1.txt"]


def test_an_existing_spill_file_is_kept_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "call_1.txt").write_text("spilled by the tool", encoding="utf-8")
    assert write_missing_spill_files(_items(), 6, str(tmp_path)) == [tmp_path / "call-3.txt"]
    assert (tmp_path / "call_1.txt").read_text(encoding="utf-8") == "spilled by the tool"
