"""The statements of a session's steady path, each declared where it is written: what creating a
session, loading it, taking its lease, starting a turn, writing its model calls and tool
results, finishing it and tracing it run. ``steady(sql)`` declares one (and returns it); every
pool connection prepares what was declared before it serves a turn (``PoolWarmth``), so the
first turn after a start pays no statement preparation (issue 13 §3: the first model call no
slower than the second). Nothing lists them: importing a storage module declares its own.
``tests/integration/storage/test_statement_priming.py`` runs such turns on a warmed pool and
names any statement they still had to prepare: one added to that path is declared ``steady``."""

from __future__ import annotations

_DECLARED: dict[str, None] = {}
"""In declaration order (a dict: each text once)."""


def steady(sql: str) -> str:
    """Declare ``sql`` a statement of the steady path; ``sql`` itself, for the module's constant."""
    _DECLARED.setdefault(sql, None)
    return sql


def steady_statements() -> tuple[str, ...]:
    """Every statement declared so far, once each, in declaration order."""
    return tuple(_DECLARED)
