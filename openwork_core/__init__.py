"""OpenWork core: the runtime daemon behind a coding-agent desktop app (docs/architecture.md).

The public names are re-exported here. They load on first use (PEP 562), so importing one
submodule does not import the whole runtime and its provider SDKs."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openwork_core.context.engine import ContextEngine, PreparedModelCall
    from openwork_core.context.inspection import ContextInspection
    from openwork_core.models.port import ModelPort
    from openwork_core.service import OpenWorkCore
    from openwork_core.session.directory import SessionDirectory
    from openwork_core.session.handle import SessionHandle
    from openwork_core.session.registry import SessionRegistry
    from openwork_core.session.storage import SessionStorage

_EXPORTS = {
    "ContextEngine": "openwork_core.context.engine",
    "ContextInspection": "openwork_core.context.inspection",
    "ModelPort": "openwork_core.models.port",
    "OpenWorkCore": "openwork_core.service",
    "PreparedModelCall": "openwork_core.context.engine",
    "SessionDirectory": "openwork_core.session.directory",
    "SessionHandle": "openwork_core.session.handle",
    "SessionRegistry": "openwork_core.session.registry",
    "SessionStorage": "openwork_core.session.storage",
}

__all__ = [
    "ContextEngine",
    "ContextInspection",
    "ModelPort",
    "OpenWorkCore",
    "PreparedModelCall",
    "SessionDirectory",
    "SessionHandle",
    "SessionRegistry",
    "SessionStorage",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'openwork_core' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
