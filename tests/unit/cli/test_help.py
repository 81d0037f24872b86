"""Issue 25 point 8: the help a new user reads. Flags show no value type (``--version``, not
``--version <bool>``), paragraphs are wrapped to the terminal rather than where the source broke
its lines, and the exit statuses are listed, in ``--help`` and in the README, from one enum."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from openwork_core.cli.commands import COMMAND_MODULES, app
from openwork_core.cli.errors import ExitStatus

README = Path(__file__).resolve().parents[3] / "README.md"
WIDTH = 80


def _help(*args: str) -> str:
    done = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": str(WIDTH)})
    assert done.exit_code == 0, done.output
    return done.output


def test_root_help_lists_version_as_a_flag_and_every_exit_status() -> None:
    text = _help()
    assert re.search(r"^  --version\s+Print the version and exit\.$", text, re.M), text
    assert "<bool>" not in text
    for status in ExitStatus:
        assert re.search(rf"^\s+{status.value}\s+{re.escape(status.meaning)}$", text, re.M)


@pytest.mark.parametrize("command", list(COMMAND_MODULES))
def test_each_commands_help_fits_the_terminal_without_flag_types(command: str) -> None:
    text = _help(command)
    assert "<bool>" not in text
    assert all(len(line) <= WIDTH for line in text.splitlines()), text


def test_chat_help_joins_its_paragraphs_and_names_its_options_and_exit_statuses() -> None:
    text = _help("chat")
    flat = " ".join(text.split())
    assert (
        "Text typed while a turn runs steers it (a slash command waits until the turn ends); /help lists the slash"
        in flat
    )
    # a paragraph's lines are filled to the width, not broken where the docstring was
    paragraph = text.split("\n\n")[2].splitlines()
    assert len(paragraph) >= 2 and all(len(line) > WIDTH - 20 for line in paragraph[:-1])
    assert "--mode <auto|accept_edits>" in text and "-m, --model <str>" in text
    assert "130" in text and "Exit status:" in text


def test_the_readme_exit_status_table_is_the_enum() -> None:
    rows = re.findall(r"^\| (\d+) \| (.+) \|$", README.read_text(), re.M)
    assert [(int(code), meaning) for code, meaning in rows] == [
        (s.value, s.meaning) for s in ExitStatus
    ]
