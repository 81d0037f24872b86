"""Text typed while a turn runs (issue 25 point 8): on a terminal, the keys are read without echo
(so they never land in the answer) by a thread that edits one line at a time and puts each
finished line, and the line being typed, into the turn's inbox. Ctrl-C still signals (ISIG is
kept). Off a terminal nothing is read: piped input is the prompt's, line by line."""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import sys
import termios
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from openwork_core.cli.client import Inbox

_BACKSPACE = ("\x7f", "\x08")
_CLEAR_LINE = "\x15"  # Ctrl-U
_ENTER = ("\r", "\n")


@dataclass(frozen=True, slots=True)
class Typed:
    """A line finished with Enter."""

    text: str


@dataclass(frozen=True, slots=True)
class Draft:
    """The line being typed, after each key."""

    text: str


class LineEditor:
    """Keys → one line of text: printable characters append, Backspace deletes one, Ctrl-U
    clears the line, Enter finishes it; escape sequences (arrow keys) and other control keys
    are ignored. Pure."""

    def __init__(self) -> None:
        self.draft = ""
        self._escape = ""

    def feed(self, keys: str) -> list[str]:
        """The lines ``keys`` finished (blank ones dropped)."""
        finished: list[str] = []
        for key in keys:
            if self._escape:
                self._escape = self._in_escape(self._escape + key)
            elif key == "\x1b":
                self._escape = key
            elif key in _ENTER:
                if self.draft.strip():
                    finished.append(self.draft)
                self.draft = ""
            elif key in _BACKSPACE:
                self.draft = self.draft[:-1]
            elif key == _CLEAR_LINE:
                self.draft = ""
            elif key.isprintable():
                self.draft += key
        return finished

    @staticmethod
    def _in_escape(sequence: str) -> str:
        """The sequence still open after its latest key, or "" once it is complete
        (``ESC [ … final``, ``ESC O x``, or ``ESC x``)."""
        if len(sequence) == 2:
            return sequence if sequence[1] in "[O" else ""
        if sequence[1] == "O":
            return ""
        return "" if "@" <= sequence[-1] <= "~" else sequence


class TypeAhead:
    """While entered (on a terminal): echo and line editing off, a thread putting ``Typed`` and
    ``Draft`` into ``inbox``. ``suspended()`` gives the terminal back for a question."""

    def __init__(self, inbox: Inbox, fd: int | None = None) -> None:
        self._inbox = inbox
        self._fd = sys.stdin.fileno() if fd is None else fd
        self._editor = LineEditor()
        self._saved: list[Any] | None = None  # termios attributes, as tcgetattr gives them
        self._thread: threading.Thread | None = None
        self._stop_r, self._stop_w = -1, -1

    @property
    def active(self) -> bool:
        return self._saved is not None

    @property
    def draft(self) -> str:
        return self._editor.draft

    def __enter__(self) -> TypeAhead:
        self._start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop()

    @contextlib.contextmanager
    def suspended(self) -> Iterator[None]:
        was_active = self.active
        self._stop()
        try:
            yield
        finally:
            if was_active:
                self._start()

    def _start(self) -> None:
        if not os.isatty(self._fd):
            return
        saved = termios.tcgetattr(self._fd)
        quiet = list(saved)
        quiet[3] = int(saved[3]) & ~(termios.ICANON | termios.ECHO)  # lflag; ISIG stays
        cc = list(saved[6])
        cc[termios.VMIN], cc[termios.VTIME] = 1, 0
        quiet[6] = cc
        termios.tcsetattr(self._fd, termios.TCSANOW, quiet)
        self._saved = saved
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._read, name="openwork-typeahead", daemon=True)
        self._thread.start()

    def _stop(self) -> None:
        if self._saved is None:
            return
        os.write(self._stop_w, b"x")
        if self._thread is not None:
            self._thread.join()
        for fd in (self._stop_r, self._stop_w):
            os.close(fd)
        with contextlib.suppress(termios.error):
            termios.tcsetattr(self._fd, termios.TCSANOW, self._saved)
        self._saved, self._thread = None, None

    def _read(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while True:
            ready, _, _ = select.select([self._fd, self._stop_r], [], [])
            if self._stop_r in ready:
                return
            try:
                data = os.read(self._fd, 1024)
            except OSError:
                return
            if not data:
                return
            for line in self._editor.feed(decoder.decode(data)):
                self._inbox.put(Typed(line))
            self._inbox.put(Draft(self._editor.draft))
