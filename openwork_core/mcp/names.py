"""The model-visible names of MCP tools (issue 27 point 3; docs/mcp.md "Names"), pure.

``mcp__<server>__<tool>`` with every character outside ``[A-Za-z0-9_-]`` replaced by ``_`` (the
rule OpenAI and Anthropic both enforce on tool names), at most 64 characters. A name that is too
long, or that two tools would share after the replacement (``a.b`` and ``a_b``), is cut and ends
with ``_`` plus 8 hex digits of the SHA-256 of the raw ``mcp__<server>__<tool>``: the result
depends only on the set of (server, tool) pairs, never on the order they were listed in."""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable

PREFIX = "mcp__"
SEPARATOR = "__"
MAX_NAME_CHARS = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_HASH_CHARS = 8


def raw_name(server: str, tool: str) -> str:
    return f"{PREFIX}{server}{SEPARATOR}{tool}"


def sanitized(server: str, tool: str) -> str:
    return _UNSAFE.sub("_", raw_name(server, tool))


def _hashed(raw: str, plain: str, salt: int = 0) -> str:
    digest = hashlib.sha256(f"{raw}\x00{salt}".encode() if salt else raw.encode()).hexdigest()
    return f"{plain[: MAX_NAME_CHARS - _HASH_CHARS - 1]}_{digest[:_HASH_CHARS]}"


def qualified_names(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """Each distinct (server, tool) pair's unique model-visible name."""
    ordered = sorted(set(pairs), key=lambda p: raw_name(*p))
    by_plain: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for pair in ordered:
        by_plain[sanitized(*pair)].append(pair)
    names: dict[tuple[str, str], str] = {}
    taken: set[str] = set()
    hashed: list[tuple[str, str]] = []
    for plain, group in by_plain.items():
        if len(group) == 1 and len(plain) <= MAX_NAME_CHARS:
            names[group[0]] = plain
            taken.add(plain)
        else:
            hashed.extend(group)
    for pair in sorted(hashed, key=lambda p: raw_name(*p)):
        raw, salt = raw_name(*pair), 0
        name = _hashed(raw, sanitized(*pair))
        while name in taken:  # a digest that meets another name: salt it (deterministic order)
            salt += 1
            name = _hashed(raw, sanitized(*pair), salt)
        names[pair] = name
        taken.add(name)
    return names
