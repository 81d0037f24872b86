"""Issue 23's code figures for a checkout, read from its files (``ast``; nothing of it is imported).

Run: ``.venv/bin/python bench/code_figures.py [--source DIR ...] [--verbose]``. One source (the
repository this script lives in by default): one line per figure; two or more: a markdown table,
one column per source. The product is every ``*.py`` under ``openwork_core/``,
``openwork_chat_state/`` and ``openwork_tools/``; "module level" is a module's body and the
bodies of its top-level ``if``/``try``/``with`` blocks, not of its functions or classes. The rules:

1. product files; lines (every line, ``str.splitlines``) and code lines (neither blank nor,
   stripped, starting with ``#``; docstrings count as code).
2. modules with an ``if TYPE_CHECKING:`` (or ``if typing.TYPE_CHECKING:``) block anywhere.
3. imports inside functions: ``import``/``from … import`` statements with a ``def`` or
   ``async def`` among their enclosing nodes (a class or ``if`` in between counts too).
4. lazy package ``__init__`` files: an ``__init__.py`` defining ``__getattr__`` at module level
   (a ``def``, or an assignment as ``if not TYPE_CHECKING: __getattr__ = lazy_getattr(...)``),
   and their lines (all lines, as in 1).
5. private-attribute uses of dependencies: the rules of THIS repository's
   ``tests/unit/test_public_apis_only.py`` (an older checkout may have no such test), its
   functions applied to each file of the checkout; the dependency classes it imports to ask
   for their private members are the installed ones. ``--verbose`` lists the uses.
6. unused public names: ``python -m vulture`` on the three packages at ``--min-confidence 60``;
   the distinct ``path:name`` of functions, methods, properties and classes not starting with
   ``_`` (as ``tests/unit/test_unused_public.py`` counts), then without the entries of the
   checkout's ``tests/unit/unused_public_allowlist.txt`` (the text before ``#`` of each line).
   ``--verbose`` lists what is left.
7. types per concept (``CONCEPTS`` below: a class whose name contains the word and whose fields,
   its own annotated class attributes plus those of its product bases found by name, pass the
   test); and
   - session update unions: module-level assignments to a name containing ``Update`` whose value
     holds an ``A | B`` union (the number of its members in brackets);
   - session status: ``*Status*`` names both a class and a module-level ``= Literal[...]``; and
     ``Literal[...]`` of strings equal to the value set of a ``*Status*`` enum (a class with a
     base ending in ``Enum``; its values the ``NAME = "..."`` of its body);
   - compaction kind: classes and module-level assignments named ``CompactionKind`` and
     ``Literal[...]`` equal to its values; the modules ``M`` of ``from M import CompactionKind``
     statements anywhere in a file, with their number (a lazy-export table is not one).
8. hops from ``POST /v1/sessions/{sid}/turns`` to the socket: not computed here; it is measured
   by hand (an instrumented run of the daemon on a database).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parents[1]
PACKAGES = ("openwork_core", "openwork_chat_state", "openwork_tools")
KINDS = ("function", "method", "property", "class")
VULTURE_LINE = re.compile(r"^(.+?):\d+: unused (\w+) '([^']+)'")

TOKENS = {f"{k}_tokens" for k in ("input", "cached_input", "cache_write", "output", "reasoning")}
SUMMARY = {"title", "turn_count"}
Fields = dict[str, str]  # a class's annotated attributes: name → annotation as written
CONCEPTS: dict[str, tuple[str, Callable[[Fields], bool]]] = {
    # concept (the rule, as printed) → the word its class names contain, what its fields hold
    "token usage (*Usage* with the five *_tokens)": ("Usage", lambda f: set(f) >= TOKENS),
    "session summary (*Summary* with title, turn_count)": (
        "Summary",
        lambda f: f.keys() >= SUMMARY,
    ),
    "message (*Message* with role or a Message)": (
        "Message",
        lambda f: "role" in f or "Message" in f.values(),
    ),
}


@dataclass(frozen=True)
class Module:
    path: Path  # relative to the checkout
    text: str
    tree: ast.Module


def product(root: Path) -> list[Module]:
    paths = sorted(p for package in PACKAGES for p in (root / package).rglob("*.py"))
    texts = [(path, path.read_text(encoding="utf-8")) for path in paths]
    return [Module(p.relative_to(root), text, ast.parse(text, str(p))) for p, text in texts]


def has_type_checking_block(tree: ast.Module) -> bool:
    tests = (ast.unparse(n.test) for n in ast.walk(tree) if isinstance(n, ast.If))
    return any(test in ("TYPE_CHECKING", "typing.TYPE_CHECKING") for test in tests)


def imports_in_functions(node: ast.AST, in_function: bool = False) -> int:
    count = int(in_function and isinstance(node, ast.Import | ast.ImportFrom))
    inside = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    return count + sum(imports_in_functions(child, inside) for child in ast.iter_child_nodes(node))


def module_level(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """The statements run at import: the module's body and what its ``if``/``try``/``with``
    blocks hold, not the bodies of its functions and classes."""
    for node in body:
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for field in ("body", "orelse", "finalbody", "handlers"):
                yield from module_level(getattr(node, field, []))


def assigned_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.AnnAssign) and node.value:
        return [node.target.id] if isinstance(node.target, ast.Name) else []
    targets = node.targets if isinstance(node, ast.Assign) else []
    return [t.id for t in targets if isinstance(t, ast.Name)]


def defines_getattr(tree: ast.Module) -> bool:
    return any(
        "__getattr__" in assigned_names(node)
        or (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "__getattr__")
        for node in module_level(tree.body)
    )


def load_checker() -> ModuleType:
    """This repository's public-APIs check (it imports only the standard library)."""
    path = HERE / "tests" / "unit" / "test_public_apis_only.py"
    spec = importlib.util.spec_from_file_location("public_apis_only_check", path)
    assert spec is not None and spec.loader is not None
    checker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(checker)
    return checker


def private_uses(modules: list[Module], checker: ModuleType) -> list[str]:
    found: list[str] = []
    for module in modules:
        nodes = list(ast.walk(module.tree))
        foreign = checker.foreign_names(nodes)
        found += [
            f"{module.path}:{line}: {what}"
            for line, what in (
                *checker.private_imports(nodes),
                *checker.private_attributes(nodes, foreign),
                *checker.private_members_of_foreign_subclasses(nodes, foreign),
            )
        ]
    return found


def unused_public(root: Path) -> tuple[set[str], set[str]]:
    """vulture's public unused names, and the checkout's allow-list (empty when it has none)."""
    command = [sys.executable, "-m", "vulture", *PACKAGES, "--min-confidence", "60"]
    run = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    if run.returncode not in (0, 3):  # 3: dead code found
        raise SystemExit(f"vulture failed in {root}: {run.stderr}")
    found = map(VULTURE_LINE.match, run.stdout.splitlines())
    unused = {f"{m[1]}:{m[3]}" for m in found if m and m[2] in KINDS and not m[3].startswith("_")}
    allowlist = root / "tests" / "unit" / "unused_public_allowlist.txt"
    lines = allowlist.read_text().splitlines() if allowlist.exists() else []
    return unused, {entry for line in lines if (entry := line.split("#", 1)[0].strip())}


def base_names(cls: ast.ClassDef) -> list[str]:
    return [ast.unparse(b).split("[", 1)[0].rsplit(".", 1)[-1] for b in cls.bases]


def fields_of(
    cls: ast.ClassDef, classes: dict[str, list[ast.ClassDef]], seen: frozenset[str] = frozenset()
) -> Fields:
    fields: Fields = {}
    for base in base_names(cls):
        for parent in classes.get(base, []) if base not in seen else []:
            fields.update(fields_of(parent, classes, seen | {cls.name}))
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            fields[node.target.id] = ast.unparse(node.annotation)
    return fields


def module_assignments(modules: list[Module]) -> Iterable[tuple[Module, str, ast.expr]]:
    for module in modules:
        for node in module_level(module.tree.body):
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value:
                for name in assigned_names(node):
                    yield module, name, node.value


def union_members(node: ast.AST) -> int:
    """Members of the first ``A | B | …`` in ``node`` (0: none; the product never spells
    ``Union[...]``)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return max(union_members(node.left), 1) + max(union_members(node.right), 1)
    return next((n for c in ast.iter_child_nodes(node) if (n := union_members(c))), 0)


def literal_strings(node: ast.AST) -> frozenset[str] | None:
    if not (isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("Literal")):
        return None
    elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    values = [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return frozenset(values) if len(values) == len(elts) else None


def enum_values(cls: ast.ClassDef) -> frozenset[str]:
    if not any(b.endswith("Enum") for b in base_names(cls)):
        return frozenset()
    return frozenset(
        n.value.value
        for n in cls.body
        if isinstance(n, ast.Assign)
        and isinstance(n.value, ast.Constant)
        and isinstance(n.value.value, str)
    )


def respellings(modules: list[Module], enums: list[tuple[str, frozenset[str]]]) -> list[str]:
    """``Literal[...]`` anywhere whose strings are exactly one of ``enums``' value sets."""
    return [
        f"Literal of {name} ({module.path}:{node.lineno})"
        for module in modules
        for node in ast.walk(module.tree)
        if isinstance(node, ast.Subscript) and (values := literal_strings(node))
        for name, enum in enums
        if values == enum
    ]


def shown(items: list[str]) -> str:
    return f"{len(items)}: {', '.join(items)}" if items else "0"


def concept_figures(modules: list[Module]) -> dict[str, str]:
    located = [(m, n) for m in modules for n in ast.walk(m.tree) if isinstance(n, ast.ClassDef)]
    classes: dict[str, list[ast.ClassDef]] = {}
    for _, cls in located:
        classes.setdefault(cls.name, []).append(cls)
    twice = {name for name, defs in classes.items() if len(defs) > 1}

    def label(module: Module, name: str) -> str:
        return f"{name} ({module.path.with_suffix('')})" if name in twice else name

    figures = {}
    for concept, (word, holds) in CONCEPTS.items():
        found = [(m, c) for m, c in located if word in c.name and holds(fields_of(c, classes))]
        figures[f"types: {concept}"] = shown([label(m, c.name) for m, c in found])
    assigned = list(module_assignments(modules))
    figures["types: session update unions"] = shown(
        [
            f"{name} ({n}) ({m.path})"
            for m, name, value in assigned
            if "Update" in name and (n := union_members(value))
        ]
    )
    literal_names = {name for _, name, value in assigned if literal_strings(value) is not None}
    status_enums = [(c.name, v) for _, c in located if "Status" in c.name and (v := enum_values(c))]
    figures["types: *Status* name both a class and a Literal"] = shown(
        sorted(n for n in literal_names if "Status" in n and n in classes)
    )
    figures["types: Literal re-spelling a *Status* enum"] = shown(
        respellings(modules, status_enums)
    )
    kinds = [f"class ({m.path})" for m, c in located if c.name == "CompactionKind"]
    kinds += [f"alias ({m.path})" for m, name, _ in assigned if name == "CompactionKind"]
    kind_enums = [("CompactionKind", enum_values(c)) for c in classes.get("CompactionKind", [])]
    figures["types: CompactionKind definitions"] = shown(kinds + respellings(modules, kind_enums))
    sources = Counter(
        node.module
        for m in modules
        for node in ast.walk(m.tree)
        if isinstance(node, ast.ImportFrom) and any(a.name == "CompactionKind" for a in node.names)
    )
    figures["types: CompactionKind imported from"] = shown(
        [f"{s} ×{n}" for s, n in sorted(sources.items(), key=str)]
    )
    return figures


def figures(root: Path, checker: ModuleType, verbose: bool) -> dict[str, str]:
    modules = product(root)
    lines = [line.strip() for m in modules for line in m.text.splitlines()]
    lazy = [m for m in modules if m.path.name == "__init__.py" and defines_getattr(m.tree)]
    lazy_lines = sum(len(m.text.splitlines()) for m in lazy)
    trees = [m.tree for m in modules]
    uses = private_uses(modules, checker)
    unused, allowed = unused_public(root)
    if verbose:
        print(f"## {root}", *uses, *(f"unused: {u}" for u in sorted(unused - allowed)), sep="\n")
    return {
        "product files": str(len(modules)),
        "product lines": str(len(lines)),
        "product code lines (not blank, not comment)": str(
            sum(bool(s) and not s.startswith("#") for s in lines)
        ),
        "modules with `if TYPE_CHECKING:`": str(sum(map(has_type_checking_block, trees))),
        "imports inside functions": str(sum(map(imports_in_functions, trees))),
        "lazy package `__init__` files (their lines)": f"{len(lazy)} ({lazy_lines})",
        "private-attribute uses of dependencies": str(len(uses)),
        "unused public names (vulture 60 %)": str(len(unused)),
        "unused public names, allow-list subtracted": (
            f"{len(unused - allowed)} (allow-list: {len(allowed)})"
        ),
        **concept_figures(modules),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument("--source", action="append", type=Path, help="a checkout (repeatable)")
    parser.add_argument("--verbose", action="store_true", help="list private uses and unused names")
    args = parser.parse_args()
    sources: list[Path] = [s.resolve() for s in args.source or [HERE]]
    checker = load_checker()
    columns = [figures(source, checker, args.verbose) for source in sources]
    if len(columns) == 1:
        for name, value in columns[0].items():
            print(f"{name}: {value}")
        return
    print("| figure | " + " | ".join(str(s) for s in sources) + " |")
    print("| --- |" + " --- |" * len(sources))
    for name in columns[0]:
        print(f"| {name} | " + " | ".join(column[name] for column in columns) + " |")


if __name__ == "__main__":
    main()
