"""Turn outcomes and failure codes (session-runtime.md §3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from openwork_core.failure_codes import FailureCode as FailureCode
from openwork_core.storage.records import TurnStatus


@dataclass(frozen=True, slots=True)
class Completed:
    status: Literal[TurnStatus.COMPLETED] = field(default=TurnStatus.COMPLETED, kw_only=True)
    final_text: str


@dataclass(frozen=True, slots=True)
class Failed:
    status: Literal[TurnStatus.FAILED] = field(default=TurnStatus.FAILED, kw_only=True)
    code: FailureCode
    message: str


@dataclass(frozen=True, slots=True)
class Cancelled:
    status: Literal[TurnStatus.CANCELLED] = TurnStatus.CANCELLED


TurnOutcome: TypeAlias = Completed | Failed | Cancelled
"""Discriminated by ``status``; fields in wire order (``status`` first), so the wire serializer
writes ``{"status":"completed","finalText":…}``, ``{"status":"failed","code":…,"message":…}`` and
``{"status":"cancelled"}`` in ``turn_finished`` and the terminal snapshot."""


class TurnFailure(Exception):
    """Raised inside the runner to end the turn with a failure outcome."""

    def __init__(self, code: FailureCode, message: str) -> None:
        super().__init__(message)
        self.outcome = Failed(code, message)


class TurnCancelled(Exception):
    """Raised inside the runner when the turn's cancel signal fired."""
