"""The one byte metric of the context engine (context-window.md §7.1).

Every size is the length of ``orjson.dumps`` output: compact, UTF-8, no ASCII escaping — exactly
what serde_json writes. A token estimate is those bytes divided by 4, rounded up.
"""

from __future__ import annotations

import orjson

BYTES_PER_TOKEN = 4


def json_size(value: object) -> int:
    """Bytes of the compact JSON of ``value``."""
    return len(orjson.dumps(value))


def tokens_for_bytes(size: int) -> int:
    """⌈size / 4⌉."""
    return -(-size // BYTES_PER_TOKEN)


def array_size(element_sizes_total: int, count: int) -> int:
    """Bytes of a JSON array whose ``count`` elements serialize to ``element_sizes_total`` bytes in
    all: the brackets plus one comma between neighbours. Lets the engine measure a region from
    cached per-item sizes without serializing it again."""
    return 2 + element_sizes_total + (count - 1 if count > 0 else 0)
