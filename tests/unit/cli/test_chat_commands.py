"""Issue 25 point 8, the pure parts of `openwork chat`'s input: the keys typed during a turn
(edited into lines, never echoed), what a line means (a command or a message), and how lines
typed during a turn are sent afterwards."""

from __future__ import annotations

from openwork_core.cli.chat_commands import (
    HELP,
    Command,
    Message,
    batches,
    help_lines,
    model_label,
    parse,
)
from openwork_core.cli.typeahead import LineEditor


def test_keys_make_lines_with_backspace_ctrl_u_and_arrow_keys_ignored() -> None:
    editor = LineEditor()
    assert editor.feed("helo\x7flo") == []
    assert editor.draft == "hello"
    assert editor.feed("\x1b[D\x1b[A\x1bOB there\r") == ["hello there"]
    assert editor.draft == ""
    assert editor.feed("scrap\x15next\n\r") == ["next"]  # Ctrl-U; a blank line is dropped
    assert editor.feed("\x1b[") == [] and editor.feed("1;5Cok") == [] and editor.draft == "ok"
    assert editor.feed("\x03\x04") == [] and editor.draft == "ok"  # other control keys
    assert editor.feed("é\r") == ["oké"]


def test_a_line_is_a_command_a_message_or_nothing() -> None:
    assert parse("   ") is None
    assert parse("/MODE accept_edits ") == Command("mode", "accept_edits")
    assert parse("/quit") == Command("quit", "")
    assert parse("//etc/hosts is odd") == Message("/etc/hosts is odd")
    assert parse("  fix the build") == Message("  fix the build")


def test_lines_typed_during_a_turn_become_one_message_between_commands() -> None:
    assert batches(["one", "two", "/mode auto", "three", "", "four"]) == [
        Message("one\ntwo"),
        Command("mode", "auto"),
        Message("three\nfour"),
    ]
    assert batches([]) == []


def test_help_lists_every_command_with_the_modes() -> None:
    lines = help_lines()
    assert [line.split()[0] for line in lines[: len(HELP)]] == [
        "/help",
        "/new",
        "/mode",
        "/model",
        "/inspect",
        "/quit",
    ]
    assert "/mode [auto|accept_edits]" in lines[2]


def test_the_model_label_is_the_sessions_model_or_its_providers_first() -> None:
    providers = {"providers": [{"id": "default", "models": [{"name": "qwen3"}, {"name": "x"}]}]}
    assert model_label({"provider": "default", "model": "x"}, providers) == "x (provider default)"
    assert (
        model_label({"provider": "default", "model": None}, providers)
        == "qwen3 (provider default's default)"
    )
    assert model_label({"provider": "gone", "model": None}, providers) == (
        "the default model of provider gone"
    )
