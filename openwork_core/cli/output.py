"""Where the CLI writes: rich on a terminal, plain parseable text when stdout is not a TTY or
``NO_COLOR`` is set, JSON with ``--json``."""

from __future__ import annotations

import os
import sys
from typing import TextIO

import orjson
from pydantic import JsonValue
from rich.console import Console

_CONTROLS = {
    code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0)) if chr(code) not in "\n\t"
}


def visible(text: str) -> str:
    """``text`` for a terminal, its control characters shown, not obeyed: each C0 control but
    newline and tab, DEL and each C1 control written as ``\\xNN``. Model text, tool output,
    approval cards and titles are untrusted: a raw ESC could erase the command a card shows
    (``\\x1b[2K``), write the clipboard (OSC 52) or draw a fake prompt. Rich strips a few
    controls (BEL, CR) but passes ESC through."""
    return text.translate(_CONTROLS)


def plain_output(stream: TextIO | None = None) -> bool:
    """Plain text: not a terminal, or NO_COLOR set to anything (https://no-color.org rule)."""
    target = stream if stream is not None else sys.stdout
    return "NO_COLOR" in os.environ or not target.isatty()


def console(stream: TextIO | None = None) -> Console:
    target = stream if stream is not None else sys.stdout
    if plain_output(target):
        return Console(file=target, no_color=True, highlight=False, emoji=False, width=10_000)
    return Console(file=target, highlight=False)


def err_console() -> Console:
    return console(sys.stderr)


def print_json(value: JsonValue) -> None:
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")
    sys.stdout.flush()


def tsv_lines(header: list[str], rows: list[list[str]]) -> list[str]:
    """Plain tables: one line per row, cells separated by tabs (tabs and newlines inside a cell
    become spaces), the header first."""
    return ["\t".join(" ".join(visible(cell).split()) for cell in row) for row in [header, *rows]]
