"""The docs name code that exists: every backticked file path in docs/*.md and README.md
resolves in the repository, every name after `path.py::` is defined in that module, and every
`Class.member` of a class of the packages is defined on that class.

A reference is checked when it looks like a path of this repository: it ends in .py, .md, .toml,
.sql, .ts or .sh (optionally followed by `::name`), or it is a directory ending in `/`; in a
span of several words (a command) only the words with a `/` are. It resolves against the repo
root, then openwork_core/, tests/, openwork_tools/, openwork_chat_state/, bench/ and docs/;
`../shared/…` and the spec pages resolve in the shared directory beside the repository (skipped
when that directory is absent). A path relative to the package a page is about
(`adapters/sse.py`, or a bare `errors.py` in a table of one package's modules) resolves when a
file's path ends with it; `…/x.py` the same way; `…chat…::name` when a module whose path holds
those pieces, in order, defines `name`. `::name` alone reuses the last module the page named
before it (a table's rows, a sentence's list); the last test module for `::test_…`. `name` is a
top-level function, class or assignment of the module (a parametrised id's `[…]` dropped), or
`Class.member` / `Class::member` of one of its classes.

Not checked: URLs, paths outside the repository (`~/…`, `/etc/…`, `$VAR/…`, `OPENWORK_HOME/…`,
`.venv/…`, `.git/…`), the user's files the product reads (`AGENTS.md`, `SKILL.md`,
`config.toml`), a single directory name (`run/`, `info/`: the home's, `.git`'s), glob
patterns, templated paths (`<name>`, `{sid}`), and symbols without a path other than
`Class.member` (a bare `append` or `run` is too ambiguous to resolve).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
PAGES = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]
ROOTS = ("", "openwork_core", "tests", "openwork_tools", "openwork_chat_state", "bench", "docs")
PACKAGES = ("openwork_core", "openwork_tools", "openwork_chat_state")
SKIPPED_DIRS = {
    ".git",
    ".venv",
    "node_modules",
    "__pycache__",
    "build",
    "dist",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    ".openwork-home",
    "artifacts",
}

CODE_SPAN = re.compile(r"`([^`]+)`")
NEW_BLOCK = re.compile(r"\s*(?:[-*+] |\d+\. |\||#)")
FILE = r"[\w.…/-]*[\w…]\.(?:py|md|toml|sql|ts|sh)"
NAME = r"(?P<name>[\w.:\[\]-]+)"
PATH_REF = re.compile(rf"(?P<path>{FILE}|[\w.…/-]*/)(?:::{NAME})?")
ELIDED_MODULE = re.compile(rf"(?P<path>[\w./-]*…[\w./…-]*)::{NAME}")
CONTINUATION = re.compile(rf"::{NAME}")
CLASS_MEMBER = re.compile(r"(?P<cls>[A-Z][A-Za-z0-9]*)\.(?P<member>[a-z_]\w*)(?:\(.*\))?")
TOP_LEVEL_DEF = re.compile(r"^(?:async def|def|class) (\w+)", re.MULTILINE)
CLASS_DECLARATION = re.compile(r"^[ \t]*class (\w+)", re.MULTILINE)
NOT_REPO = ("~", "/", "$", ".venv/", ".git/", "OPENWORK_HOME", "http:", "https:", "file:")
# files of a user's workspace, skill folder or config dir, which the product reads
USER_FILES = {"AGENTS.md", "SKILL.md", "config.toml"}


@dataclass(frozen=True)
class Reference:
    """Where a reference is and what it names: a path and the name after its `::`, or a class
    and its member."""

    page: str
    line: int
    text: str
    target: str = ""
    name: str | None = None

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: `{self.text}`"


@dataclass
class Definition:
    """A top-level name of a module; for a class, its members and the names of its bases."""

    members: set[str] = field(default_factory=set)
    bases: list[str] = field(default_factory=list)


def _blocks(page: Path) -> Iterator[tuple[int, str]]:
    """The page's paragraphs, list items, table rows and headings outside fenced code, each
    with its first line's number: a code span never crosses from one to the next."""
    start, fenced = 0, False
    lines: list[str] = []
    for number, line in enumerate([*page.read_text().splitlines(), ""], start=1):
        fence = line.lstrip().startswith("```")
        fenced = fenced != fence
        if fence or fenced or not line.strip() or NEW_BLOCK.match(line):
            if lines:
                yield start, "\n".join(lines)
            start, lines = number, []
        if not (fence or fenced or not line.strip()):
            lines.append(line)


def _code_spans() -> Iterator[tuple[Path, int, str]]:
    """Each backticked span of the pages (its line breaks kept), with the line it starts on."""
    for page in PAGES:
        for start, block in _blocks(page):
            for span in CODE_SPAN.finditer(block):
                yield page, start + block.count("\n", 0, span.start()), span[1]


@cache
def _path_references() -> tuple[Reference, ...]:
    return tuple(_read_path_references())


def _read_path_references() -> Iterator[Reference]:
    """Every path reference of the pages; `::name` alone gets the page's previous module (test
    module, for a test)."""
    previous_module: dict[tuple[Path, bool], str] = {}  # (page, of a test module) → path
    for page, start, span in _code_spans():
        tokens = [(start + n, t) for n, line in enumerate(span.split("\n")) for t in line.split()]
        for number, token in tokens:
            where = (page.relative_to(REPO).as_posix(), number, token)
            token = token.removesuffix("::*")  # every test of the module: the path is checked
            if token.startswith("::"):
                continuation = CONTINUATION.fullmatch(token)
                kind = (page, continuation["name"].startswith("test")) if continuation else None
                if continuation and kind in previous_module:
                    yield Reference(*where, previous_module[kind], continuation["name"])
                continue
            if token.startswith(NOT_REPO) or any(c in token for c in "*<>{}?="):
                continue
            if len(tokens) > 1 and "/" not in token:
                continue  # a word of a command: `pg_dump … > openwork.sql` names no repo file
            match = ELIDED_MODULE.fullmatch(token) or PATH_REF.fullmatch(token)
            if match is None or _not_a_repo_path(match["path"]):
                continue
            if match["path"].endswith(".py"):
                previous_module[page, False] = match["path"]
                if match["path"].rsplit("/", 1)[-1].startswith(("test_", "…")):
                    previous_module[page, True] = match["path"]
            yield Reference(*where, match["path"], match["name"])


def _not_a_repo_path(path: str) -> bool:
    """A user's file, or one directory name: `run/`, `info/` and `scripts/` name directories of
    the home, of `.git` or of a skill more often than of the repository."""
    one_directory = path.endswith("/") and "/" not in path.rstrip("/")
    return path.strip("./…") == "" or one_directory or path.rsplit("/", 1)[-1] in USER_FILES


@cache
def _repo_files() -> tuple[str, ...]:
    """Every file and directory of the repository (as `a/b.py` and `a/`), build output and
    installed packages left out."""
    found: list[str] = []
    for directory, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.endswith(".egg-info")]
        relative = Path(directory).relative_to(REPO).as_posix()
        prefix = "" if relative == "." else f"{relative}/"
        found.extend(f"{prefix}{d}/" for d in dirs)
        found.extend(f"{prefix}{f}" for f in files)
    return tuple(found)


@cache
def _files_by_name() -> dict[str, list[str]]:
    """The repository's files and directories, and the shared directory's files (as
    `../shared/…`), by their last name."""
    found: dict[str, list[str]] = {}
    for path in (*_repo_files(), *(f"../shared/{f}" for f in _shared_files())):
        found.setdefault(path.rstrip("/").rsplit("/", 1)[-1], []).append(path)
    return found


@cache
def _shared_files() -> tuple[str, ...]:
    if not SHARED.is_dir():
        return ()
    return tuple(p.relative_to(SHARED).as_posix() for p in SHARED.rglob("*") if p.is_file())


@cache
def _candidates(path: str) -> tuple[Path, ...]:
    """The existing files or directories `path` names; empty when it names none."""
    if path.startswith("../shared/"):
        found = SHARED / path.removeprefix("../shared/")
        return (found,) if found.exists() else ()
    if "…" in path:
        pieces = [re.escape(piece) for piece in path.split("…")]
        pattern = re.compile(".*".join(pieces) + (r"[^/]*\.py$" if "." not in path else "$"))
        return tuple(REPO / f for f in _repo_files() if f.endswith(".py") and pattern.search(f))
    for root in ROOTS:
        found = REPO / root / path
        if found.exists():
            return (found,)
    same_name = _files_by_name().get(path.rstrip("/").rsplit("/", 1)[-1], [])
    return tuple(REPO / f for f in same_name if f"/{f}".endswith(f"/{path}"))


def _unresolvable_without_shared(path: str) -> bool:
    """A spec page, DESIGN.md or a `../shared/` path, when the shared directory is absent."""
    return not SHARED.is_dir() and (path.startswith("../shared/") or path.endswith(".md"))


def _base_name(base: ast.expr) -> str:
    while isinstance(base, ast.Subscript):
        base = base.value
    if isinstance(base, ast.Attribute):
        return base.attr
    return base.id if isinstance(base, ast.Name) else ""


def _assigned(node: ast.stmt) -> Iterator[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    for target in targets:
        for leaf in ast.walk(target) if target is not None else ():
            if isinstance(leaf, ast.Name):
                yield leaf.id


def _visit(body: list[ast.stmt], into: dict[str, Definition]) -> None:
    """Record the names `body` defines: functions, classes (with their members, their `self.x`
    and their bases) and assignments, also inside module-level `if`, `try` and `with`."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            into.setdefault(node.name, Definition())
        elif isinstance(node, ast.ClassDef):
            members: dict[str, Definition] = {}
            _visit(node.body, members)
            definition = into.setdefault(node.name, Definition())
            definition.members.update(members)
            definition.members.update(
                leaf.attr
                for leaf in ast.walk(node)
                if isinstance(leaf, ast.Attribute)
                and isinstance(leaf.ctx, ast.Store)
                and isinstance(leaf.value, ast.Name)
                and leaf.value.id == "self"
            )
            definition.bases.extend(_base_name(base) for base in node.bases)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            for name in _assigned(node):
                into.setdefault(name, Definition())
        elif isinstance(node, ast.If | ast.Try | ast.With):
            for block in ("body", "orelse", "finalbody"):
                _visit(getattr(node, block, []), into)
            for handler in getattr(node, "handlers", []):
                _visit(handler.body, into)


@cache
def _text(module: Path) -> str:
    return module.read_text()


@cache
def _top_level_defs(module: Path) -> set[str]:
    return set(TOP_LEVEL_DEF.findall(_text(module)))


@cache
def _tree(module: Path) -> ast.Module:
    return ast.parse(_text(module), filename=str(module))


@cache
def _definitions(module: Path) -> dict[str, Definition]:
    """The module's top-level names."""
    names: dict[str, Definition] = {}
    _visit(_tree(module).body, names)
    return names


def _is_defined(name: str, module: Path) -> bool:
    """`name`, `Class.method` or `Class::method` (a parametrised id's `[...]` dropped); after a
    function or a variable, an attribute is not checked."""
    parts = re.sub(r"\[.*\]$", "", name).replace("::", ".").split(".")
    if len(parts) == 1 and parts[0] in _top_level_defs(module):
        return True  # the common case, without parsing the module
    definition = _definitions(module).get(parts[0])
    if definition is None:
        return False
    return len(parts) == 1 or not definition.members or parts[1] in definition.members


@cache
def _modules_declaring_classes() -> dict[str, list[Path]]:
    """The modules of the packages by the names of the classes they declare."""
    declared: dict[str, list[Path]] = {}
    for package in PACKAGES:
        for module in (REPO / package).rglob("*.py"):
            for name in CLASS_DECLARATION.findall(_text(module)):
                declared.setdefault(name, []).append(module)
    return declared


@cache
def _classes(name: str) -> tuple[Definition, ...]:
    """Every class of the packages called `name`."""
    return tuple(
        _definitions_of_class(node)
        for module in _modules_declaring_classes().get(name, [])
        for node in _tree(module).body
        if isinstance(node, ast.ClassDef) and node.name == name
    )


def _definitions_of_class(node: ast.ClassDef) -> Definition:
    names: dict[str, Definition] = {}
    _visit([node], names)
    return names[node.name]


def _has_member(name: str, member: str, seen: frozenset[str] = frozenset()) -> bool:
    """The class or one of its bases defined in the packages defines `member`."""
    return any(
        member in definition.members
        or any(
            _has_member(base, member, seen | {name})
            for base in definition.bases
            if base not in seen
        )
        for definition in _classes(name)
    )


def _class_member_references() -> Iterator[Reference]:
    """`Class.member` spans (a call's arguments allowed) whose class the packages define."""
    for page, number, span in _code_spans():
        match = CLASS_MEMBER.fullmatch(" ".join(span.split()))
        if match and _classes(match["cls"]):
            where = (page.relative_to(REPO).as_posix(), number, span)
            yield Reference(*where, match["cls"], match["member"])


def test_every_code_path_the_docs_name_exists() -> None:
    broken = [
        str(ref)
        for ref in _path_references()
        if not _candidates(ref.target) and not _unresolvable_without_shared(ref.target)
    ]
    assert not broken, "the docs name paths that do not exist:\n" + "\n".join(broken)


def test_every_symbol_the_docs_name_after_a_path_is_defined_there() -> None:
    broken: list[str] = []
    for ref in _path_references():
        if ref.name is None:
            continue
        modules = [m for m in _candidates(ref.target) if m.suffix == ".py" and m.is_file()]
        if modules and not any(_is_defined(ref.name, module) for module in modules):
            broken.append(str(ref))
    assert not broken, "the docs name symbols their module does not define:\n" + "\n".join(broken)


def test_every_class_member_the_docs_name_is_defined_on_that_class() -> None:
    """`Class.member` (a call's arguments allowed), for a class the packages define: the class
    or one of its bases in the packages defines the member (a method, a field, a `self.x`)."""
    broken = [
        str(ref) for ref in _class_member_references() if not _has_member(ref.target, str(ref.name))
    ]
    assert not broken, "the docs name members their class does not define:\n" + "\n".join(broken)


def test_the_checks_refuse_a_path_or_a_name_that_does_not_exist() -> None:
    """The checks above see a stale reference (the docs' own examples of one)."""
    assert _candidates("session/runner/step_writer.py")
    assert not _candidates("session/runner/assistant_commit.py")
    this = Path(__file__)
    assert _is_defined("test_every_code_path_the_docs_name_exists[case-1]", this)
    assert _is_defined("Reference.page", this)
    assert not _is_defined("Reference.nothing", this)
    assert not _is_defined("append_step", this)
    assert _has_member("SessionStorage", "append")
    assert not _has_member("SessionStorage", "append_step")
