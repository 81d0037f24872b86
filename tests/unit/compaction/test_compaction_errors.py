"""Errors with stable codes (DESIGN.md §4.5)."""

from __future__ import annotations

import inspect

from openwork_core.session.compaction import errors
from openwork_core.session.compaction.errors import CompactionError
from openwork_core.storage.postgres import compactions as storage


def _subclasses(base: type[CompactionError]) -> list[type[CompactionError]]:
    found: list[type[CompactionError]] = []
    for sub in base.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def test_every_compaction_error_has_its_own_stable_snake_case_code() -> None:
    classes: list[type[CompactionError]] = [CompactionError, *_subclasses(CompactionError)]
    declared = [
        c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, CompactionError)
    ]
    assert set(declared) <= set(classes)
    codes = [c.code for c in classes]
    codes += [
        storage.CheckpointCheckFailed.code,
        storage.NoCheckpoint.code,
        storage.TranscriptQueryInvalid.code,
    ]
    assert len(codes) == len(set(codes)), codes
    assert all(code == code.lower() and " " not in code for code in codes)
    expected = {
        "compaction_error",
        "missing_last_user",
        "summary_retries_exhausted",
        "summary_invalid",
        "checkpoint_rejected",
        "compaction_install_failed",
    }
    assert expected <= set(codes)
