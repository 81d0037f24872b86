"""One line of ``openwork doctor``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue

Verdict = Literal["ok", "warn", "fail"]


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    verdict: Verdict
    detail: str

    def to_json(self) -> JsonValue:
        return {"name": self.name, "verdict": self.verdict, "detail": self.detail}
