"""Logs (issue 15 point 4; DESIGN.md §4.7): JSON lines to a rotated file under the home, the
bound session_id / turn_id on every line, stdlib records through the same chain."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import structlog

from openwork_core.logs import LOG_FILE_NAME, configure_logging


def test_lines_go_to_the_file_as_json_with_the_bound_ids(tmp_path: Path) -> None:
    setup = configure_logging("json", log_dir=tmp_path)
    try:
        log = structlog.get_logger("t")
        with structlog.contextvars.bound_contextvars(session_id="ses_1", turn_id="turn_1"):
            log.info("turn.started", extra_field=3)
        logging.getLogger("uvicorn.error").warning("from %s", "stdlib")
    finally:
        setup.close()
    lines = [json.loads(line) for line in (tmp_path / LOG_FILE_NAME).read_text().splitlines()]
    assert lines[0]["event"] == "turn.started"
    assert (lines[0]["session_id"], lines[0]["turn_id"], lines[0]["extra_field"]) == (
        "ses_1",
        "turn_1",
        3,
    )
    assert lines[0]["level"] == "info" and "timestamp" in lines[0]
    assert (lines[1]["event"], lines[1]["level"]) == ("from stdlib", "warning")


def test_the_file_rotates_and_keeps_a_bounded_number_of_old_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import openwork_core.logs as logs

    monkeypatch.setattr(logs, "ROTATE_BYTES", 2_000)
    setup = configure_logging("json", log_dir=tmp_path)
    try:
        log = structlog.get_logger("t")
        for index in range(400):
            log.info("filler", index=index, padding="x" * 50)
    finally:
        setup.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files[0] == LOG_FILE_NAME
    assert len(files) == 1 + logs.ROTATE_KEEP
    assert all((tmp_path / name).stat().st_size <= 2_200 for name in files)
