"""Every third-party module the packages import is a declared dependency of the distribution
(issue 15 point 1): a module that works only because another package pulled it in breaks the
day that package drops it."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PACKAGES = ("openwork_core", "openwork_chat_state", "openwork_tools")
FIRST_PARTY = frozenset({*PACKAGES, "openwork_migrations"})


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_top_level_modules() -> dict[str, set[str]]:
    """Top-level module name → the files importing it (absolute imports only)."""
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for name in names:
                    found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(REPO)))
    return found


def declared_dependencies() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return {
        _normalise(re.split(r"[ <>=!~\[;]", spec, maxsplit=1)[0])
        for spec in project["dependencies"]
    }


def test_every_imported_third_party_module_is_a_declared_dependency() -> None:
    """Issue 15 §1: checked in CI (this test runs in `make test`)."""
    distributions = packages_distributions()
    declared = declared_dependencies()
    undeclared: dict[str, str] = {}
    for module, files in sorted(imported_top_level_modules().items()):
        if module in FIRST_PARTY or module in sys.stdlib_module_names or module == "__future__":
            continue
        providers = {_normalise(d) for d in distributions.get(module, [])}
        assert providers, f"{module} (imported by {sorted(files)[0]}) is not installed at all"
        if not providers & declared:
            undeclared[module] = f"{sorted(providers)} imported by {sorted(files)}"
    assert undeclared == {}, f"declare these in [project].dependencies: {undeclared}"


def test_the_check_sees_imports_and_knows_the_declared_names() -> None:
    """The walk finds what the daemon certainly imports, so an empty result cannot pass silently."""
    modules = imported_top_level_modules()
    assert {"asyncpg", "fastapi", "structlog", "typer"} <= set(modules)
    assert {"asyncpg", "fastapi", "structlog", "typer"} <= declared_dependencies()
