"""Public APIs of dependencies only (issue 23 point 2): nothing in the product packages reaches
into a private name of a module that is not ours, so no dependency's minor release can break it.

What each name refers to is read from the imports of its file: a name bound by ``import x`` or
``from x import y`` where ``x`` is not one of our packages is a dependency's (the standard
library's included). The check fails on

- importing a private name or from a private module of a dependency (``from openai._streaming
  import …``, ``from x import _y``, ``import x._y``);
- a ``._name`` attribute on an expression rooted at such a name (``asyncpg.pool._holders``,
  ``openai.AsyncStream._iter_events``);
- in a class with a dependency's base, defining a ``_name`` or reading ``self._name`` /
  ``super()._name`` that the base's classes have or mention in their own code: the override or
  use of the base's private member (``_do_execute``, ``_iter_events``, ``self._decoder``). The
  bases are imported to be asked.

Dunder names (``__init__``) and Enum's sunder hooks (``_missing_``) are public protocol. There
is no allow-list.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OURS = ("openwork_core", "openwork_chat_state", "openwork_tools")
SELF_MEMBER = re.compile(r"\b(?:self|cls)\.(_[A-Za-z]\w*)")


def is_private(name: str) -> bool:
    if name.startswith("__") and name.endswith("__"):
        return False
    if len(name) > 2 and name.startswith("_") and name.endswith("_"):
        return False  # a sunder hook (Enum's ``_missing_``, ``_generate_next_value_``)
    return name.startswith("_")


def is_ours(module: str) -> bool:
    return module.split(".", 1)[0] in OURS


def foreign_names(nodes: list[ast.AST]) -> dict[str, str]:
    """The names a file (``nodes``: its tree, walked once) binds to a dependency's module or
    attribute, wherever imported: name → what it is (``module`` or ``module:attribute``)."""
    names: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not is_ours(alias.name):
                    bound = alias.asname or alias.name.split(".", 1)[0]
                    names[bound] = alias.name if alias.asname else bound
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and not is_ours(node.module)
        ):
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}:{alias.name}"
    return names


def resolve(node: ast.expr, foreign: dict[str, str]) -> object:
    """The object an expression such as ``openai.AsyncStream[object]`` names (subscripts and
    calls dropped), or None when it is not rooted at a dependency's name."""
    while isinstance(node, ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    path: list[str] = []
    while isinstance(node, ast.Attribute):
        path.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in foreign:
        return None
    module, _, attribute = foreign[node.id].partition(":")
    value: object = importlib.import_module(module)
    for name in ([attribute] if attribute else []) + path[::-1]:
        value = getattr(value, name)
    return value


@functools.cache
def private_names_of(cls: type) -> frozenset[str]:
    """The private members a dependency's class and its bases have, declare or set on
    ``self`` in their code."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if klass is object or is_ours(klass.__module__):
            continue
        names.update(vars(klass))
        names.update(getattr(klass, "__annotations__", {}))
        with contextlib.suppress(OSError, TypeError):  # no Python source: vars() is all there is
            names.update(SELF_MEMBER.findall(inspect.getsource(klass)))
    return frozenset(name for name in names if is_private(name))


def root(node: ast.expr) -> ast.expr:
    """The innermost expression of an attribute, call or subscript chain."""
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def rooted_in(node: ast.expr, names: dict[str, str]) -> bool:
    base = root(node)
    return isinstance(base, ast.Name) and base.id in names


def private_imports(nodes: list[ast.AST]) -> Iterator[tuple[int, str]]:
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not is_ours(alias.name) and any(map(is_private, alias.name.split("."))):
                    yield node.lineno, f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if is_ours(node.module):
                continue
            if any(map(is_private, node.module.split("."))):
                yield node.lineno, f"from {node.module} import …"
            for alias in node.names:
                if is_private(alias.name):
                    yield node.lineno, f"from {node.module} import {alias.name}"


def private_attributes(nodes: list[ast.AST], foreign: dict[str, str]) -> Iterator[tuple[int, str]]:
    for node in nodes:
        if (
            isinstance(node, ast.Attribute)
            and is_private(node.attr)
            and rooted_in(node.value, foreign)
        ):
            yield node.lineno, f"{ast.unparse(node)}"


def is_self_or_super(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


def private_members_of_foreign_subclasses(
    nodes: list[ast.AST], foreign: dict[str, str]
) -> Iterator[tuple[int, str]]:
    for cls in nodes:
        if not isinstance(cls, ast.ClassDef):
            continue
        bases = [resolve(base, foreign) for base in cls.bases]
        theirs = frozenset().union(*(private_names_of(b) for b in bases if isinstance(b, type)))
        if not theirs:
            continue
        for node in ast.walk(cls):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in theirs:
                yield node.lineno, f"{cls.name}.{node.name} defined"
            elif (
                isinstance(node, ast.Attribute)
                and node.attr in theirs
                and is_self_or_super(node.value)
            ):
                yield node.lineno, f"{cls.name}: {ast.unparse(node)}"
            elif isinstance(node, ast.AnnAssign | ast.Assign) and node in cls.body:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id in theirs for t in targets):
                    yield node.lineno, f"{cls.name}: class attribute {ast.unparse(node)[:60]}"


def violations() -> list[str]:
    found: list[str] = []
    for package in OURS:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            nodes = list(ast.walk(tree))
            foreign = foreign_names(nodes)
            where = path.relative_to(ROOT)
            for line, what in (
                *private_imports(nodes),
                *private_attributes(nodes, foreign),
                *private_members_of_foreign_subclasses(nodes, foreign),
            ):
                found.append(f"{where}:{line}: {what}")
    return found


def test_the_product_uses_no_private_name_of_a_dependency() -> None:
    """issue 23 point 2: no override or use of a private attribute of asyncpg, the SDKs, httpx,
    starlette, uvicorn or any other module that is not ours."""
    assert violations() == []


def test_the_check_sees_each_kind_of_private_use() -> None:
    """The check itself: each form it must catch, in a file of its own."""
    source = """
import asyncpg
import codecs
import openai
from openai._streaming import ServerSentEvent
from httpx import _client
from openwork_core.models import _ours_to_use

class Stream(openai.AsyncStream[object]):
    async def _iter_events(self):
        async for sse in self._decoder.aiter_bytes(self.response.aiter_bytes()):
            yield sse

class Tracked(asyncpg.Connection):
    _stmt_cache = {}
    async def _do_execute(self, *args):
        return await super()._do_execute(*args)

def holders(pool: asyncpg.Pool):
    return asyncpg.pool._holders, _ours_to_use._fine

def pending(data: bytes):
    return codecs.getincrementaldecoder("utf-8")()._buffer
"""
    nodes = list(ast.walk(ast.parse(source)))
    foreign = foreign_names(nodes)
    found = sorted(
        what
        for _, what in (
            *private_imports(nodes),
            *private_attributes(nodes, foreign),
            *private_members_of_foreign_subclasses(nodes, foreign),
        )
    )
    assert found == sorted(
        [
            "from openai._streaming import …",
            "from httpx import _client",
            "Stream._iter_events defined",
            "Stream: self._decoder",
            "Tracked: class attribute _stmt_cache = {}",
            "Tracked._do_execute defined",
            "Tracked: super()._do_execute",
            "asyncpg.pool._holders",
            "codecs.getincrementaldecoder('utf-8')()._buffer",
        ]
    )
