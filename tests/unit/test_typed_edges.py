"""Typed to the edge (DESIGN.md §4 item 4: discriminated unions, ``match`` ends in ``assert_never``):
every ``match`` statement of the three product packages ends with ``case _: assert_never(…)``, so
``mypy --strict`` proves each one exhaustive."""

from __future__ import annotations

import ast
from pathlib import Path

import openwork_chat_state
import openwork_core
import openwork_tools

PACKAGES = tuple(
    Path(p.__file__).parent for p in (openwork_core, openwork_chat_state, openwork_tools)
)


def _ends_in_assert_never(node: ast.Match) -> bool:
    last = node.cases[-1]
    if not (isinstance(last.pattern, ast.MatchAs) and last.pattern.pattern is None):
        return False
    if last.pattern.name is not None or len(last.body) != 1:
        return False
    statement = last.body[0]
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Name)
        and statement.value.func.id == "assert_never"
    )


def test_every_match_statement_ends_in_assert_never() -> None:
    """DESIGN.md §4: no ``match`` with a silent fall-through or an unproven last case."""
    matches = 0
    offenders: list[str] = []
    for package in PACKAGES:
        for source in sorted(package.rglob("*.py")):
            for node in ast.walk(ast.parse(source.read_text())):
                if isinstance(node, ast.Match):
                    matches += 1
                    if not _ends_in_assert_never(node):
                        offenders.append(f"{source.relative_to(package.parent)}:{node.lineno}")
    assert matches > 0
    assert offenders == []
