"""Realistic provider error bodies (tests/fixtures/provider_errors/*.json), as fake-provider steps.

Each fixture is ``{"protocol": …, "status": N, "body": {…}}``: the body a real server of that
vendor answers (issue 14 points 1 and 6)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.fakes.fake_script import ErrorReply

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "provider_errors"


@dataclass(frozen=True, slots=True)
class ErrorFixture:
    name: str
    protocol: str
    status: int
    body: Mapping[str, object]

    def reply(self, headers: tuple[tuple[str, str], ...] = ()) -> ErrorReply:
        return ErrorReply(status=self.status, body=self.body, headers=headers)


def error_fixture(name: str) -> ErrorFixture:
    raw = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return ErrorFixture(name, str(raw["protocol"]), int(raw["status"]), raw["body"])


def fixture_names() -> list[str]:
    return sorted(p.stem for p in FIXTURES.glob("*.json"))
