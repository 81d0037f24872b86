"""A real storage seam (issue 23 point 6; docs/architecture.md "Layers"): the session runtime
depends on its storage port (``session/storage.py`` and the other ports' protocols), never on
the PostgreSQL implementation, which depends on the port. What wires the two together is the
composition root outside ``session/`` (``runtime.py``, ``service.py``).

Every import of every module under ``openwork_core/session`` counts, those inside functions and
``if TYPE_CHECKING:`` blocks included: a type-only import is still a dependency on the
implementation."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SESSION = Path(__file__).resolve().parents[2] / "openwork_core" / "session"
IMPLEMENTATION = ("openwork_core.storage.postgres", "asyncpg")


def imported_modules(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            yield node.lineno, node.module
            for alias in node.names:  # ``from openwork_core.storage import postgres``
                yield node.lineno, f"{node.module}.{alias.name}"


def is_implementation(module: str) -> bool:
    return any(module == name or module.startswith(f"{name}.") for name in IMPLEMENTATION)


def implementation_imports() -> list[str]:
    found = []
    for path in sorted(SESSION.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, module in imported_modules(tree):
            if is_implementation(module):
                found.append(f"{path.relative_to(SESSION.parent)}:{line}: {module}")
    return sorted(set(found))


def test_the_session_runtime_imports_neither_the_postgres_storage_nor_asyncpg() -> None:
    assert implementation_imports() == []


def test_the_check_sees_a_type_only_import_and_a_package_import() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from openwork_core.storage import postgres\n"
        "if TYPE_CHECKING:\n"
        "    from openwork_core.storage.postgres.store import PostgresStore\n"
        "def f():\n"
        "    import asyncpg\n"
    )
    found = {line for line, m in imported_modules(ast.parse(source)) if is_implementation(m)}
    assert found == {2, 4, 6}
