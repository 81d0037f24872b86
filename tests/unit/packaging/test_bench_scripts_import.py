"""Every script in ``bench/`` imports (issue 13: each figure is printed by a script in bench/):
mypy does not check them, so a helper renamed or removed in one bench would otherwise break
another only when somebody runs it."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"


@pytest.mark.parametrize("name", sorted(p.stem for p in BENCH.glob("*.py")))
def test_the_bench_script_imports(name: str) -> None:
    module = importlib.import_module(f"bench.{name}")
    assert module.__file__ is not None and Path(module.__file__).parent == BENCH
