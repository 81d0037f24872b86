"""The error that ends a command with one line on stderr (kept apart from the HTTP client, so the
entry point catches it without importing ``httpx``)."""

from __future__ import annotations


class CliError(Exception):
    """Ends the command with one line on stderr and ``exit_code``."""

    exit_code = 1

    def __init__(self, message: str, code: str = "error") -> None:
        super().__init__(message)
        self.code = code
