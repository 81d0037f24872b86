"""Every module compiles on every Python the distribution accepts (``requires-python >= 3.11``).

Python 3.13 cleans each docstring at compile time through UTF-8, so a docstring holding a lone
surrogate (an escape such as ``\\udc80`` written in a non-raw string) fails the module's import
there with ``UnicodeEncodeError`` while 3.11 compiles it: ``storage/codec.py``'s did, and with it
the daemon's start on 3.13 (2026-12-05)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PACKAGES = ("openwork_core", "openwork_chat_state", "openwork_tools")
DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def unencodable_docstrings() -> Iterator[str]:
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if not isinstance(node, DOCUMENTED):
                    continue
                doc = ast.get_docstring(node, clean=False)
                if doc is None:
                    continue
                try:
                    doc.encode("utf-8")
                except UnicodeEncodeError as exc:
                    where = getattr(node, "lineno", 1)
                    yield f"{path.relative_to(REPO)}:{where}: {exc.reason}"


def test_no_docstring_holds_a_lone_surrogate_so_every_module_compiles_on_python_3_13() -> None:
    assert list(unencodable_docstrings()) == []
