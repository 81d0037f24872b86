"""The error that ends a command with one line on stderr (kept apart from the HTTP client, so the
entry point catches it without importing ``httpx``), and the exit statuses of every command."""

from __future__ import annotations

import enum


class ExitStatus(enum.IntEnum):
    """What ``openwork`` exits with; ``--help`` and the README list them from here."""

    OK = 0
    FAILED = 1
    USAGE = 2
    NO_DAEMON = 3
    INTERRUPTED = 130

    @property
    def meaning(self) -> str:
        return _MEANINGS[self]


_MEANINGS = {
    ExitStatus.OK: "done (the turn completed; doctor found nothing blocking)",
    ExitStatus.FAILED: "the turn failed, a check failed, or the daemon refused a request",
    ExitStatus.USAGE: "a usage or configuration error (one line names the setting)",
    ExitStatus.NO_DAEMON: "no daemon is running (start one with `openwork serve`)",
    ExitStatus.INTERRUPTED: "the turn was cancelled (Ctrl-C, or the daemon stopped during it)",
}


def exit_status_help() -> str:
    """A block for ``--help`` (``\b``: click keeps its lines as they are)."""
    rows = "\n".join(f"  {s.value:<4} {s.meaning}" for s in ExitStatus)
    return f"\b\nExit status:\n{rows}"


class CliError(Exception):
    """Ends the command with one line on stderr and ``exit_code``."""

    exit_code: int = ExitStatus.FAILED

    def __init__(self, message: str, code: str = "error") -> None:
        super().__init__(message)
        self.code = code
