"""Spill retention (storage.md §3, tools.md §8): directories untouched for 7 days go at startup."""

from __future__ import annotations

import os
from pathlib import Path

from openwork_core.storage.spill_retention import SPILL_RETENTION_SECONDS, sweep_spill_dirs

NOW = 2_000_000_000.0


def _dir(root: Path, name: str, age_s: float) -> Path:
    directory = root / name
    directory.mkdir(parents=True)
    spilled = directory / "call.txt"
    spilled.write_text("output")
    stamp = NOW - age_s
    os.utime(spilled, (stamp, stamp))
    os.utime(directory, (stamp, stamp))
    return directory


def test_spill_directories_untouched_for_seven_days_are_deleted_and_fresh_ones_kept(
    tmp_path: Path,
) -> None:
    old = _dir(tmp_path, "ses_old", SPILL_RETENTION_SECONDS + 60)
    fresh = _dir(tmp_path, "ses_fresh", SPILL_RETENTION_SECONDS - 60)
    assert sweep_spill_dirs(tmp_path, now=NOW) == [old]
    assert not old.exists()
    assert fresh.exists()


def test_a_recent_file_keeps_an_old_directory(tmp_path: Path) -> None:
    directory = _dir(tmp_path, "ses_mixed", SPILL_RETENTION_SECONDS + 60)
    recent = directory / "recent.txt"
    recent.write_text("new")
    os.utime(recent, (NOW, NOW))
    assert sweep_spill_dirs(tmp_path, now=NOW) == []


def test_a_missing_spill_root_is_nothing_to_do(tmp_path: Path) -> None:
    assert sweep_spill_dirs(tmp_path / "absent", now=NOW) == []
