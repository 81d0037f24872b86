"""`openwork chat` renderings (issue 15 point 2): one line per tool call, the approval card,
exit codes."""

from __future__ import annotations

import io

from rich.console import Console

from openwork_core.cli.chat_session import report
from openwork_core.cli.chat_view import (
    TurnResult,
    card_lines,
    short_arguments,
    tool_line,
    turn_result,
)
from openwork_core.cli.output import tsv_lines, visible
from openwork_core.storage.records import TurnStatus


def test_a_tool_line_names_the_tool_its_main_argument_and_the_outcome() -> None:
    line = tool_line(
        "bash", '{"command": "ls -la"}', "succeeded", "a\nb\n[exit 0; duration 3 ms]", False
    )
    assert line.plain() == "+ bash ls -la -> succeeded [exit 0; duration 3 ms]"
    failed = tool_line("read", {"path": "x.py"}, "failed", "file not found: x.py\nmore", True)
    assert failed.plain() == "x read x.py -> failed: file not found: x.py"


def test_arguments_without_a_known_main_field_are_short_compact_json() -> None:
    assert short_arguments("spawn_agent", {"task": "t" * 100}).endswith("…")
    assert len(short_arguments("spawn_agent", {"task": "t" * 100})) == 60
    assert short_arguments("update_plan", {}) == ""
    assert short_arguments("bash", "not json") == "not json"


def test_the_card_shows_command_danger_justification_and_paths() -> None:
    request = {
        "toolName": "bash",
        "toolCallId": "tc_1",
        "card": {
            "mode": "auto",
            "command": "rm -rf build",
            "danger": {"key": "rm_recursive_or_force", "start": 0, "end": 12},
            "justification": "clean the build",
            "paths": [{"path": "/w/build", "access": "write", "scope": "once"}],
        },
    }
    assert card_lines(request) == [
        "approval needed: bash (mode auto)",
        "  command: rm -rf build",
        "  danger: rm_recursive_or_force",
        "  why: clean the build",
        "  path: /w/build (write, once)",
    ]


def test_exit_codes_zero_completed_130_cancelled_one_otherwise() -> None:
    assert turn_result({"status": "completed", "finalText": "x"}).exit_code == 0
    assert turn_result({"status": "cancelled"}).exit_code == 130
    failed = turn_result({"status": "failed", "code": "model_error", "message": "m"})
    assert (failed.exit_code, failed.code, failed.message) == (1, "model_error", "m")
    assert turn_result(None).exit_code == 1


def test_untrusted_text_reaches_the_terminal_with_its_controls_shown_not_obeyed() -> None:
    """Every C0 control but newline and tab, DEL and every C1 control is written ``\\xNN``: in a
    card's command, a tool line and a plain table (what the model, a tool or a title holds)."""
    assert visible("a\x1b[2K\rb\tc\nd\x7f\x9b\x07é✓") == "a\\x1b[2K\\x0db\tc\nd\\x7f\\x9b\\x07é✓"
    card = card_lines(
        {"toolName": "bash", "card": {"mode": "auto", "command": "rm -rf x\x1b[2K\rls"}}
    )
    assert card[1] == "  command: rm -rf x\\x1b[2K\\x0dls"
    line = tool_line("bash", {"command": "ls\x1b]52;c;eA==\x07"}, "succeeded", "ok\x1b[1A", False)
    assert "\x1b" not in line.plain() and "\\x1b]52" in line.plain()
    assert tsv_lines(["title"], [["Fix\x1b[31m it"]]) == ["title", "Fix\\x1b[31m it"]


def test_a_failed_turns_message_reaches_the_terminal_with_its_controls_shown() -> None:
    """A failure message carries a provider's or a tool's words: shown, not obeyed."""
    out = io.StringIO()
    failed = TurnResult(TurnStatus.FAILED, "model_error", "bad\x1b]52;c;eA==\x07 gateway")
    report(failed, Console(file=out, force_terminal=True, highlight=False))
    assert "\x1b]52" not in out.getvalue() and "bad\\x1b]52;c;eA==\\x07 gateway" in out.getvalue()
