"""One line of ``openwork doctor``."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from pydantic import JsonValue


class Verdict(enum.StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    verdict: Verdict
    detail: str

    def to_json(self) -> JsonValue:
        return {"name": self.name, "verdict": self.verdict, "detail": self.detail}
