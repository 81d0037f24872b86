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


def test_a_line_is_rendered_once_for_the_file_and_json_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The listener renders each record once (the rotating file alone used to render it twice,
    JSON stderr a third time); both sinks get the same line."""
    renders: list[object] = []
    render = structlog.processors.JSONRenderer.__call__

    def counting(self: structlog.processors.JSONRenderer, *args: object) -> object:
        renders.append(args)
        return render(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(structlog.processors.JSONRenderer, "__call__", counting)
    setup = configure_logging("json", log_dir=tmp_path)
    try:
        structlog.get_logger("t").info("once.only", n=1)
        logging.getLogger("uvicorn.error").warning("stdlib %s", "too")
    finally:
        setup.close()
    assert len(renders) == 2
    file_lines = (tmp_path / LOG_FILE_NAME).read_text().splitlines()
    assert capsys.readouterr().err.splitlines() == file_lines
    assert [json.loads(line)["event"] for line in file_lines] == ["once.only", "stdlib too"]


def test_httpx_request_lines_are_quiet_and_its_warnings_stay(tmp_path: Path) -> None:
    """httpx's per-request INFO line repeats our ``model.call``; its warnings still go out."""
    setup = configure_logging("json", log_dir=tmp_path)
    try:
        logging.getLogger("httpx").info("HTTP Request: POST http://x/v1/chat/completions")
        logging.getLogger("httpx").warning("something odd")
    finally:
        setup.close()
    events = [
        json.loads(line)["event"] for line in (tmp_path / LOG_FILE_NAME).read_text().splitlines()
    ]
    assert events == ["something odd"]
