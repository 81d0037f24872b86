"""Lazy re-exports for a package ``__init__`` (PEP 562): each public name is imported from its
module the first time it is read, then kept in the package's namespace, so importing one
submodule does not run its siblings (issue 13 §3). ``openwork_chat_state`` and ``openwork_tools``
spell the same few lines themselves: they may not import from ``openwork_core``."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping


def lazy_getattr(
    package: str, exports: Mapping[str, str], namespace: MutableMapping[str, object]
) -> Callable[[str], object]:
    """The package's ``__getattr__``: ``exports`` maps each public name to its module;
    ``namespace`` is the package's ``globals()``."""

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
